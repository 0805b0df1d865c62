-- clusters.lua — the device-type catalog and the cluster presets (built into placebench).
--
-- This file is compiled into libplacebench (harness/CMakeLists.txt embeds it); edit it and
-- rebuild.  It is evaluated in the config sandbox (base, string, table and math libraries only)
-- and must return { device_types = ..., presets = ... }:
--
--   device_types[NAME] = { peak_flops = FLOP/s (fp32), mem_bandwidth = bytes/s,
--                          memory_bytes = bytes, price_per_hour = USD (0: not priced),
--                          speed_vs_ref = peak_flops / the K80's (graph costs are K80 µs) }
--
--   presets[NAME] = { about = "one line", build = function(n, seed) ... end }
--
-- build(n, seed) returns the description of a cluster of exactly n devices, or nil and a
-- message when n does not fit the preset.  math.random is seeded with `seed` just before build
-- is called, so a preset that draws from it is deterministic for a seed.  A description:
--
--   devices  = { { type = "V100-32G", machine = 1 }, ... }  n entries; machines are 1..#machines
--   machines = { { bandwidth = B, latency = L }, ... }      the link between two devices of one
--                                                           machine; every machine has a device
--   network  = { bandwidth = B or M, latency = L or M }     between machines (needed when there
--                                                           are two or more); M is an m x m matrix
--   types    = { NAME = { ...as in device_types... } }      optional: replaces catalog entries
--                                                           for this cluster (e.g. its prices)
--   placeto  = { delta1 = µs, delta2 = µs, transfer_speed = B, init_offset = µs }
--                                                           the Placeto bus model's constants
--
-- Bandwidths B are in bytes per µs (1 GB/s = 1000, 1 Gbit/s = 125), latencies L in µs.  No key
-- other than these is accepted.

local TFLOPS = 1e12
local GBs = 1e9 -- bytes/s in 1 GB/s (memory bandwidth)
local GiB = 1024.0 * 1024.0 * 1024.0
local GBps = 1000 -- bytes/µs in 1 GB/s (links)
local Gbps = 125 -- bytes/µs in 1 Gbit/s (networks)

-- ---------------------------------------------------------------- device types
-- FLOP/s are fp32 peaks from NVIDIA's datasheets (at boost clock), except the K80's, which is
-- at base clock as in the K80 of the dataset generators' cost model (harness/model/devcost.h).
-- Prices are on-demand list prices (USD per GPU-hour, Linux, us-east-1 / us-central1) of the
-- cloud instance that rents one such device, or the instance price divided by its GPUs.
local device_types = {
    -- One GK210 die of a Tesla K80 (the Placeto papers' device): 2496 cores x 2 FLOP x 562 MHz
    -- ~ 2.8 TFLOP/s (5.6 per two-die board; 2.8e12 as in devcost.h), 240 GB/s (480 per board),
    -- 12 GiB.  AWS p2.xlarge (one die): 0.90 USD/h.
    K80 = { peak_flops = 2.8 * TFLOPS, mem_bandwidth = 240 * GBs, memory_bytes = 12 * GiB,
            price_per_hour = 0.90 },
    -- Tesla P100 PCIe 16 GB: 9.3 TFLOP/s, 732 GB/s.  AWS rents no P100; Google Cloud lists
    -- 1.46 USD/h per P100.
    P100 = { peak_flops = 9.3 * TFLOPS, mem_bandwidth = 732 * GBs, memory_bytes = 16 * GiB,
             price_per_hour = 1.46 },
    -- Tesla V100 SXM2 16 GB: 15.7 TFLOP/s, 900 GB/s.  AWS p3.2xlarge (one V100): 3.06 USD/h.
    ["V100-16G"] = { peak_flops = 15.7 * TFLOPS, mem_bandwidth = 900 * GBs,
                     memory_bytes = 16 * GiB, price_per_hour = 3.06 },
    -- Tesla V100 SXM2 32 GB: the same chip.  AWS p3dn.24xlarge: 31.212 USD/h for 8 GPUs.
    ["V100-32G"] = { peak_flops = 15.7 * TFLOPS, mem_bandwidth = 900 * GBs,
                     memory_bytes = 32 * GiB, price_per_hour = 31.212 / 8 },
    -- GeForce GTX 1080 Ti: 3584 cores x 2 FLOP x 1582 MHz = 11.34 TFLOP/s, 484 GB/s, 11 GiB.
    -- A consumer card that clouds do not rent: not priced.
    ["1080Ti"] = { peak_flops = 3584 * 2 * 1582e6, mem_bandwidth = 484 * GBs,
                   memory_bytes = 11 * GiB, price_per_hour = 0 },
    -- Tesla T4: 8.1 TFLOP/s, 320 GB/s, 16 GiB.  AWS g4dn.xlarge (one T4): 0.526 USD/h.
    T4 = { peak_flops = 8.1 * TFLOPS, mem_bandwidth = 320 * GBs, memory_bytes = 16 * GiB,
           price_per_hour = 0.526 },
    -- A100 SXM4 40 GB: 19.5 TFLOP/s (plain fp32, not TF32), 1555 GB/s.  AWS p4d.24xlarge:
    -- 32.7726 USD/h for 8 GPUs.
    A100 = { peak_flops = 19.5 * TFLOPS, mem_bandwidth = 1555 * GBs, memory_bytes = 40 * GiB,
             price_per_hour = 32.7726 / 8 },
    -- One core of an Intel Xeon Gold 6271C, the CPU of the HeterPS servers (2 x 24 cores,
    -- 512 GB each): 2 AVX-512 FMA units x 16 fp32 lanes x 2 FLOP x 2.6 GHz = 166.4 GFLOP/s;
    -- 6 DDR4-2933 channels per socket (140.8 GB/s) shared by 24 cores; a 48th of the server's
    -- 512 GB; 0.04 USD/h per core (the HeterPS paper's price).
    CPU = { peak_flops = 2 * 16 * 2 * 2.6e9, mem_bandwidth = 6 * 2933e6 * 8 / 24,
            memory_bytes = 512 * GiB / 48, price_per_hour = 0.04 },
}

local reference = device_types.K80
for _, t in pairs(device_types) do -- each entry on its own: the visiting order does not matter
    t.speed_vs_ref = t.peak_flops / reference.peak_flops
end

-- A copy of catalog type `name` with another price (for clusters with their own prices).
local function priced(name, price)
    local t = {}
    for k, v in pairs(device_types[name]) do
        t[k] = v
    end
    t.price_per_hour = price
    return t
end

-- ---------------------------------------------------------------- links
-- Bandwidths per direction.  No paper gives link latencies; these are typical orders of
-- magnitude (a peer copy over NVLink or PCIe takes a few µs, an RDMA message over InfiniBand
-- about 2 µs, a TCP message over 10 GbE some tens of µs).
local links = {
    -- PCIe 3.0 x16: 8 GT/s x 16 lanes x 128/130 = 15.75 GB/s raw; device copies reach ~12 GB/s.
    pcie3 = { bandwidth = 12 * GBps, latency = 5 },
    -- NVLink 2.0: 25 GB/s per link and direction (NVIDIA V100 whitepaper).  On a 4 x V100-SXM2
    -- server, whose GPUs are joined by two links per pair, p2pBandwidthLatencyTest measures
    -- 47.9 GB/s per pair (Dell EMC, "Deep Learning Performance with V100 GPUs"): ~24 per link.
    nvlink2 = { bandwidth = 24 * GBps, latency = 2 },
    nvlink2x2 = { bandwidth = 48 * GBps, latency = 2 },
    -- Between two cores of one server: a single-thread memory copy on a Xeon server runs at
    -- about 10 GB/s.
    shared_memory = { bandwidth = 10 * GBps, latency = 1 },
    -- Networks at their line rate.
    ethernet10 = { bandwidth = 10 * Gbps, latency = 25 },
    switch100 = { bandwidth = 100 * Gbps, latency = 5 },
    infiniband100 = { bandwidth = 100 * Gbps, latency = 2 },
}

-- ---------------------------------------------------------------- building descriptions

-- The constants of the Placeto simulator's bus model (specs/placeto.md §1): delta1 and delta2
-- are TensorFlow's overheads as Placeto measured them, kept for every cluster; the bus speed of
-- a cluster other than the Placeto box is its slowest link between two devices.
local function placeto_bus(d)
    local count, slowest = {}, math.huge
    for _, dev in ipairs(d.devices) do
        count[dev.machine] = (count[dev.machine] or 0) + 1
    end
    for m, link in ipairs(d.machines) do
        if count[m] > 1 or #d.devices == 1 then
            slowest = math.min(slowest, link.bandwidth)
        end
    end
    if #d.machines > 1 then
        local bw = d.network.bandwidth
        if type(bw) == "number" then
            slowest = math.min(slowest, bw)
        else
            for a = 1, #d.machines do
                for b = 1, #d.machines do
                    if a ~= b then
                        slowest = math.min(slowest, bw[a][b])
                    end
                end
            end
        end
    end
    return { delta1 = 5.7, delta2 = 25, transfer_speed = slowest, init_offset = 0 }
end

-- A machine of the given link holding `count` devices of each { type, count } group.
local function machine(link, ...)
    return { link = link, groups = { ... } }
end

-- The first n devices of a list of machines, in order (a preset of fixed size).
local function first_devices(n, spec)
    local total = 0
    for _, m in ipairs(spec.machines) do
        for _, g in ipairs(m.groups) do
            total = total + g[2]
        end
    end
    if n > total then
        return nil, string.format("has %d devices; devices = %d does not fit (use 1..%d: the "
                                  .. "first n devices, machine by machine)", total, n, total)
    end
    local d = { devices = {}, machines = {}, network = spec.network, types = spec.types }
    for _, m in ipairs(spec.machines) do
        if #d.devices == n then
            break
        end
        d.machines[#d.machines + 1] = m.link
        for _, g in ipairs(m.groups) do
            for _ = 1, g[2] do
                if #d.devices < n then
                    d.devices[#d.devices + 1] = { type = g[1], machine = #d.machines }
                end
            end
        end
    end
    d.placeto = placeto_bus(d)
    return d
end

local function repeated(times, m)
    local list = {}
    for i = 1, times do
        list[i] = m
    end
    return list
end

local function concat(...)
    local list = {}
    for _, part in ipairs({ ... }) do
        for _, m in ipairs(part) do
            list[#list + 1] = m
        end
    end
    return list
end

-- A uniform real number in [lo, hi].
local function uniform(lo, hi)
    return lo + (hi - lo) * math.random()
end

-- ---------------------------------------------------------------- presets

local presets = {}

presets["placeto-k80"] = {
    about = "n identical K80s in one box, one outgoing bus each: 7600 B/us, delta1 5.7 us, "
        .. "delta2 25 us (Placeto)",
    build = function(n)
        local d = { devices = {}, machines = { { bandwidth = 7600, latency = 0 } } }
        for i = 1, n do
            d.devices[i] = { type = "K80", machine = 1 }
        end
        d.placeto = { delta1 = 5.7, delta2 = 25, transfer_speed = 7600, init_offset = 0 }
        return d
    end,
}

-- TAG §5.2: one machine with 4 V100 32GB joined by NVLink, four with 2 GTX 1080Ti, two with
-- 2 P100 (PCIe inside), all on a 100 Gbps switch.
presets["tag-testbed"] = {
    about = "TAG testbed: 7 machines, 4 V100-32G (NVLink) + 4x2 1080Ti + 2x2 P100 (PCIe), "
        .. "100 Gbps; the first n of its 16 GPUs",
    build = function(n)
        return first_devices(n, {
            machines = concat({ machine(links.nvlink2x2, { "V100-32G", 4 }) },
                              repeated(4, machine(links.pcie3, { "1080Ti", 2 })),
                              repeated(2, machine(links.pcie3, { "P100", 2 }))),
            network = links.switch100,
        })
    end,
}

-- TAG §5.6 (Table 5, SFB): two machines with one GTX 1080Ti each.  The paper does not name the
-- network; the testbed's 100 Gbps switch is assumed.
presets["tag-sfb"] = {
    about = "TAG's SFB experiment (Table 5): 2 machines with one 1080Ti each, 100 Gbps (assumed, "
        .. "the testbed's switch); the first n of its 2 GPUs",
    build = function(n)
        return first_devices(n, {
            machines = repeated(2, machine(links.pcie3, { "1080Ti", 1 })),
            network = links.switch100,
        })
    end,
}

-- TAG's code (search/data.py, specs/tag.md §5) simulates the testbed as three groups, not seven
-- machines: 4 V100 (30 GiB, 8000 B/µs inside), 8 1080Ti (9 GiB, 3000) and 4 P100 (10 GiB, 3000),
-- 2810 B/µs between groups, and a fixed 12 µs (GRPC_LATENCY) on every transfer.  This preset is
-- that topology, for comparing with TAG's simulator; tag-testbed is the paper's hardware.
local function tag_code_type(name, memory)
    local t = priced(name, device_types[name].price_per_hour)
    t.memory_bytes = memory
    return t
end
presets["tag-testbed-code"] = {
    about = "TAG's simulated testbed (its code): 4 V100 | 8 1080Ti | 4 P100, 8000/3000/3000 B/us "
        .. "inside, 2810 between, 12 us; the first n of 16",
    build = function(n)
        return first_devices(n, {
            machines = { machine({ bandwidth = 8000, latency = 12 }, { "V100-30G", 4 }),
                         machine({ bandwidth = 3000, latency = 12 }, { "1080Ti-9G", 8 }),
                         machine({ bandwidth = 3000, latency = 12 }, { "P100-10G", 4 }) },
            network = { bandwidth = 2810, latency = 12 },
            types = { ["V100-30G"] = tag_code_type("V100-32G", 30 * GiB),
                      ["1080Ti-9G"] = tag_code_type("1080Ti", 9 * GiB),
                      ["P100-10G"] = tag_code_type("P100", 10 * GiB) },
        })
    end,
}

-- TAG §5.2: 6 cloud machines, two with 8 V100 16GB and four with 4 T4, 10 Gbps between them.
-- The paper does not name the links inside; 8 x V100 16GB cloud machines (e.g. AWS
-- p3.16xlarge) join their GPUs by NVLink (one link per pair is assumed), T4s are PCIe cards.
presets["tag-cloud"] = {
    about = "TAG cloud: 6 machines, 2x8 V100-16G (NVLink) + 4x4 T4 (PCIe), 10 Gbps; the "
        .. "first n of its 32 GPUs",
    build = function(n)
        return first_devices(n, {
            machines = concat(repeated(2, machine(links.nvlink2, { "V100-16G", 8 })),
                              repeated(4, machine(links.pcie3, { "T4", 4 }))),
            network = links.ethernet10,
        })
    end,
}

-- GDP (Zhou et al.) places graphs on one machine with a CPU and up to 8 NVIDIA P100s.  The paper
-- names neither the CPU nor the links; assumed here: the host of NVIDIA's P100 DGX-1, two 20-core
-- Xeon E5-2698 v4 (2.2 GHz; AVX2, 2 FMA x 8 fp32 lanes: 32 FLOP per cycle and core; 4 DDR4-2133
-- channels of 17 GB/s per socket; 512 GiB) as one device of type CPU-host, and PCIe 3.0 between
-- all devices.
local gdp_host = { peak_flops = 40 * 32 * 2.2e9, mem_bandwidth = 2 * 4 * 17.06 * GBs,
                   memory_bytes = 512 * GiB, price_per_hour = 0 }
gdp_host.speed_vs_ref = gdp_host.peak_flops / reference.peak_flops
presets["gdp-p100"] = {
    about = "GDP: one machine, a host CPU (2 x Xeon E5-2698 v4) + 8 P100 on PCIe; the first n "
        .. "of its 9 devices (the CPU first)",
    build = function(n)
        return first_devices(n, {
            machines = { machine(links.pcie3, { "CPU-host", 1 }, { "P100", 8 }) },
            types = { ["CPU-host"] = gdp_host },
        })
    end,
}

-- HeterPS §5: 4 GPU servers (8 V100 and 2 x 24 CPU cores each) and 10 CPU servers (2 x 24
-- cores), 100 Gbps InfiniBand; 2.42 USD/h per GPU, 0.04 USD/h per CPU core.  Each CPU core is
-- a device.  The paper does not give the V100s' memory size; 16 GB is assumed.  Inside a GPU
-- server devices talk over PCIe, inside a CPU server through memory.
presets["heterps"] = {
    about = "HeterPS: 4 GPU servers (8 V100 + 48 CPU cores) and 10 CPU servers (48 cores), "
        .. "100 Gbps IB, 2.42/0.04 USD/h; the first n of its 704 devices",
    build = function(n)
        return first_devices(n, {
            machines = concat(repeated(4, machine(links.pcie3, { "V100-16G", 8 }, { "CPU", 48 })),
                              repeated(10, machine(links.shared_memory, { "CPU", 48 }))),
            network = links.infiniband100,
            types = { ["V100-16G"] = priced("V100-16G", 2.42), CPU = priced("CPU", 0.04) },
        })
    end,
}

-- HeterPS §5 simulates 2, 4, 32 and 64 resource types: CPU cores and V100s that differ only in
-- price.  Here n = T: device 1 is a CPU core, devices 2..n one V100 of each price class
-- j = 1..n-1 at 2.42 * max(0.05, 1 - 0.05 (j - 1)) USD/h (the schedule specs/heterps.md §8 fits
-- to the paper's gaps).  One device stands for each type: the heterps simulator provisions units
-- and checks them against its own limits.
presets["heterps-types"] = {
    about = "HeterPS resource types: n = T (2..64), one CPU core and one V100 per price class "
        .. "j = 1..n-1 at 2.42 max(0.05, 1 - 0.05(j-1)) USD/h",
    build = function(n)
        if n < 2 or n > 64 then
            return nil, string.format("devices are the resource types T, 2..64 (got %d)", n)
        end
        local d = { devices = { { type = "CPU", machine = 1 } }, machines = { links.pcie3 },
                    types = { CPU = priced("CPU", 0.04) } }
        for j = 1, n - 1 do
            local name = string.format("V100-p%d", j)
            d.types[name] = priced("V100-16G", 2.42 * math.max(0.05, 1 - 0.05 * (j - 1)))
            d.devices[#d.devices + 1] = { type = name, machine = 1 }
        end
        d.placeto = placeto_bus(d)
        return d
    end,
}

-- TAG §5.2's random device topologies: [1, 6] machines, [1, 8] GPUs per machine all of one of
-- three types (the testbed's: V100-32G, 1080Ti, P100), an intra-machine bandwidth in
-- [64, 160] Gbps per machine and an inter-machine bandwidth in [20, 50] Gbps per pair of
-- machines.  Here the device count n is given: the machine count is drawn uniformly among those
-- that can hold n GPUs, then the GPUs are dealt one by one to machines with room left.
local random_types = { "V100-32G", "1080Ti", "P100" }

presets["tag-random"] = {
    about = "TAG random topology (seeded): 1..6 machines of 1..8 GPUs of one type each, 64-160 "
        .. "Gbps inside, 20-50 Gbps between; n = 1..48",
    build = function(n)
        if n > 48 then
            return nil, string.format("draws at most 6 machines of 8 GPUs (TAG §5.2), so devices "
                                      .. "must be 1..48 (got %d)", n)
        end
        local m = math.random((n + 7) // 8, math.min(6, n))
        local per = {}
        for k = 1, m do
            per[k] = 1
        end
        for _ = m + 1, n do
            local open = {}
            for k = 1, m do
                if per[k] < 8 then
                    open[#open + 1] = k
                end
            end
            local k = open[math.random(#open)]
            per[k] = per[k] + 1
        end
        -- No latencies are drawn: PCIe's inside machines, 10 GbE's between them.
        local d = { devices = {}, machines = {},
                    network = { bandwidth = {}, latency = links.ethernet10.latency } }
        for k = 1, m do
            local t = random_types[math.random(#random_types)]
            d.machines[k] = { bandwidth = uniform(64, 160) * Gbps, latency = links.pcie3.latency }
            for _ = 1, per[k] do
                d.devices[#d.devices + 1] = { type = t, machine = k }
            end
        end
        local bw = d.network.bandwidth
        for a = 1, m do
            bw[a] = bw[a] or {}
            bw[a][a] = 0
            for b = a + 1, m do
                bw[b] = bw[b] or {}
                bw[a][b] = uniform(20, 50) * Gbps
                bw[b][a] = bw[a][b]
            end
        end
        d.placeto = placeto_bus(d)
        return d
    end,
}

return { device_types = device_types, presets = presets }
