"""The HTTP API: every op of the registry over HTTP on the loopback address, with mem0's REST
routes on top, served by the viewer's HTTP server (one port, one gate, one dispatch)."""
