// The two page helpers every card module builds with: an element by its id,
// and a new element with its properties and children.

export const $ = (id) => document.getElementById(id);

export function el(tag, props, ...children) {
  const e = document.createElement(tag);
  Object.assign(e, props || {});
  for (const c of children) e.append(c);
  return e;
}
