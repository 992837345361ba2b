"""A room, sans I/O: its core (`RoomCore`: seats, the rules state, turn windows), the
messages it makes and the logs that keep them, its records and snapshots, and the commands
a session may give it; every call carries `now`."""
