"""Readings beyond memory, per platform, behind one seam (`interfaces.readings.SensorSource`).

Modules: `linux_sys` (thermal zones and CPU frequency from /sys), `darwin_pmset` (thermal
warning level and CPU speed limit from `pmset -g therm`, no root needed), `nvidia_sensors`
(temperature, power against its limit, SM clock and throttle reasons: NVML through the memory
sampler's handles, nvidia-smi where NVML cannot start),
`combined` (several sources read as one; `sensors_for`, the one place a platform picks its
sources, called by `platforms.probes.PlatformProbes.detect`).
"""
