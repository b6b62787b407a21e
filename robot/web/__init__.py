"""The web panel and local API (`cuberobot serve`): a face on the
press-start engine for a browser or a phone, and a JSON API.

:mod:`.panel` runs the engine and carries its events, :mod:`.api` is the
Starlette application, :mod:`.guard` the gate in front of it (host, origin,
token, body size), :mod:`.server` binds and runs it with uvicorn; the page
itself (HTML, CSS, JavaScript, no outside assets) is in ``static/``.
"""
