"""The pure core: data in, decisions out. No I/O, no clock reads, no globals."""
