"""The throwaway game of tests/test_new_game.py: its files are copied into a temporary copy
of the tree and tested there, not here, where no such game is registered."""

collect_ignore_glob = ["files/*"]
