"""The storm: a queue of lanes that obeys `slots allowed` and calibrates when idle."""
