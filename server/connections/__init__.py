"""One client's connection: its peer (the protocol state and the queue's bound), its outbox
for the transport it came by, its session (requests to room commands, exactly one reply
each), the fan-out that feeds it, and the house bots that are sessions without a socket."""
