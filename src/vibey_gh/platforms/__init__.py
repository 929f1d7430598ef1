"""Platform seams: what differs between operating systems, and nothing else does.

`support` says which OS this is and whether the tool runs on it (macOS, Linux);
`probes.PlatformProbes` picks what the machine is and how much memory it uses. The calls that differ
between systems live here too: durable writes (`durability`: F_FULLFSYNC on macOS), file locks never
taken through links (`locks`), who holds a port (`ports`), process groups and sessions
(`processes`), the embedded runner's stop signals (`stopsignals`) and which paths are the system's
rather than the user's (`system_paths`: kernel file systems, system folders). `sensors/` reads
what a platform reports beyond memory: temperatures, power, clocks, throttling. Nothing outside this
package names an OS or makes those calls.
"""
