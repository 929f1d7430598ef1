"""Platform seams: what differs between operating systems, and nothing else does.

`support` says which OS this is and whether the tool runs on it (macOS, Linux); `parallelism`
sets the production runner's slots and window, `service_env` reads the environment production
gets from its service manager, `nvidia` reads NVIDIA GPUs through NVML (for the probes and the
sensors alike), `startup` steers a short process's imports and quiets stdout once its reader
left. Sub-packages:

- `device/`: what the machine is and how much memory it uses (`probes.PlatformProbes`, per OS
  in `linux` with `procfs`, and `darwin`; `footprint` the production runner's memory,
  `readings` the device facts' sources);
- `process/`: platform tools run without a shell (`commands`), process groups and sessions
  (`processes`), a process's tree (`process_tree`), who holds a port (`ports`), the embedded
  runner's stop signals (`stopsignals`);
- `storage/`: atomic writes and private dirs (`atomic_files`), durable writes (`durability`:
  F_FULLFSYNC on macOS), file locks never taken through links (`locks`), which paths are the
  system's rather than the user's (`system_paths`: kernel file systems, system folders);
- `sensors/`: what a platform reports beyond memory: temperatures, power, clocks, throttling.

Nothing outside this package names an OS or makes those calls.
"""
