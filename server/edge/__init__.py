"""The process and its edge: settings, the composition root (`Server`), the Starlette
endpoints, uvicorn with dicehall's own WebSocket protocol (ws/) and the gate before it,
`dicehall serve` and its workers."""
