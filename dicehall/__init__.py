"""dicehall: a realtime WebSocket game server for dice and tile games.

The one import package a wheel installs. Its four subpackages are the repository's
top-level folders (this folder links to them): `dicehall.rules` (the games),
`dicehall.protocol` (the wire protocol), `dicehall.server` and `dicehall.clients` (the
client library, bots and the `dicehall` command). docs/contributing.md, "How the tree is
cut", says what each may import.
"""
