"""Platform seams: what the machine is and how much memory it uses, per operating system.

`probes.PlatformProbes` picks the implementations; nothing outside this package names an OS.
"""
