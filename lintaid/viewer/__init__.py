"""The web viewer the daemon serves on the loopback address (``lintaid ui``).

It reads through the ops and the ``Reader`` like every other caller and writes only through
ops (the single writer); it never touches a store. ``gate`` decides who may talk to it,
``server`` serves HTTP, ``routes`` turns requests into pages, ``render`` holds the templates'
helpers, ``calls`` runs ops in the daemon's process and ``live`` tells open pages that
something was written.
"""
