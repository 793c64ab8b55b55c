"""The pure core: data in, data out; imports nothing of the shell."""
