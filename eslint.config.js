// ESLint's configuration (flat config) for the web panel's JavaScript:
// robot/web/static/*.js, ES modules that run in the browser with no build
// step. tests/test_lint.py runs it through ./run-tests; any finding fails.
import js from "@eslint/js";

// The browser's API as the panel uses it, named one by one rather than every
// global a browser has: `name`, `status`, `event`, `top` or `close` are
// globals too, and a typo or a forgotten declaration of one of them would
// then pass no-undef silently. A new browser API is one word added here.
const BROWSER = [
  "clearInterval", "CustomEvent", "document", "EventSource", "fetch", "FormData", "IntersectionObserver",
  "MutationObserver", "performance",
  "requestAnimationFrame", "setInterval", "setTimeout", "window",
];

export default [
  // run-tests' venv and build output hold other projects' JavaScript
  { ignores: [".venv/", "build/", "dist/", "firmware/build/"] },

  // ESLint's recommended rules: among them no-undef (every name declared or
  // imported: no hidden globals between the modules), no-unused-vars (an
  // import or a variable nobody reads, including a caught error: write
  // `catch {`), no-redeclare, no-dupe-keys, no-unreachable, no-fallthrough.
  js.configs.recommended,

  {
    files: ["robot/web/static/**/*.js"],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "module",
      globals: Object.fromEntries(BROWSER.map((name) => [name, "readonly"])),
    },
    rules: {
      // The modules talk through import and export: nothing is hung on window.
      "no-restricted-syntax": ["error", {
        selector: "AssignmentExpression > MemberExpression.left[object.name='window']",
        message: "export it from its module and import it where it is needed, instead of a window global",
      }],
      // The API's answers are JSON: compare them without coercion (a status
      // 0 or an empty string is not null).
      eqeqeq: ["error", "always"],
      // A name that hides another in an outer scope (`e`, `r`, `say`) is
      // read as the wrong one sooner or later.
      "no-shadow": "error",
      // Block scope only, and const unless the name really changes.
      "no-var": "error",
      "prefer-const": "error",
    },
  },

  {
    files: ["eslint.config.js"],
    languageOptions: { ecmaVersion: 2022, sourceType: "module" },
  },
];
