"""Room hosting: the rooms this process runs, their actors and the one path by which what
a room did becomes durable (its store) and then visible (the hub), the same in both
deployments."""
