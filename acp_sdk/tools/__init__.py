"""Tools built on the public API: the command line, the turn renderer, the scenario agent
and test helpers.
"""
