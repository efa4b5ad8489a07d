//! storlab's integration tests: the real binary on real directories and a
//! real tmpfs. One binary, one module per area.

#[macro_use]
mod util;

/// The adversarial audit's findings (#16), each as the case that broke.
mod audit;
/// The `block` target on loop devices the tests create: refusals, and io
/// on the raw device.
mod block_target;
/// The block layer's own view of runs (bpftrace on the block tracepoints)
/// against what the workloads saw: device latency, read and flush requests.
mod block_trace;
/// The HTML report in a real headless Chromium.
mod browser;
/// Verdicts on simulated and real mock campaigns with a known truth.
mod calibration;
/// Capacity searches against ground truth: a throttled loop device, the
/// mock's M/M/1 queue, a tmpfs's CPU; resumed searches, check, refusals.
mod capacity;
/// A minimal DevTools client for the browser tests.
mod cdp;
/// The command line: version, completions, man pages, init, stdin, export
/// formats, closed streams, SIGHUP, stuck external commands.
mod cli;
/// storlab on a simulated cluster: Gluster bricks on server hosts, a client host.
mod cluster_runs;
/// Real commands (tar extraction, failures, timeouts) timed as `command` workloads.
mod command_runs;
/// What survives a killed campaign, and what the next one cleans.
mod crash;
/// The reference in docs/ against the code's declarations.
mod docs;
/// The io_uring and mmap engines and open-loop rates.
mod engines;
/// `check`'s refusals and estimates against real runs.
mod estimates;
/// Malformed experiment files: one error line with file:line:column, exit 2.
mod experiment_errors;
/// The JSON export against its published JSON Schema.
mod export_schema;
/// Real fio job files run as `fio` workloads, mapped into storlab metrics.
mod fio_runs;
/// Thousands of mutated experiment files: no panic, every refusal located.
mod fuzz_experiments;
/// Hundreds of mutated stores imported: no panic, the destination works.
mod fuzz_imports;
/// Across releases, hosts and stores: provenance, tags, import, compare, history.
mod history;
/// Hostile input and faults, round 3 (#29): the store overwritten, fio
/// jobs escaping, unbounded sweeps, bad imports, foreign text on the
/// terminal, cleanup past a failure, daemons, exit codes, symlinks.
mod hostile;
/// Hostile input, round 4 (#40): found experiment files, what the host
/// can hold, absurd stored values, foreign text in every output.
mod hostile_input;
/// No import cycles among the modules of src/ (read with syn).
mod import_cycles;
/// Never impossible, everywhere: no output of campaigns of large
/// slowdowns on noisy figures, nor of the busy-host fixture, shows a bound
/// below −100%.
mod impossible_bounds;
/// fio's access patterns, write data and verify in the io engine, and
/// per-second latency percentiles, through the real binary.
mod io_patterns;
/// Real runs of the io workload on directories and tmpfs, checked through the store.
mod io_runs;
/// Where the reads came from, against ground truth on real stacks: the
/// device, the page cache, Gluster's io-cache, shared buffers.
mod layers;
/// What storlab starts, mounts or registers outlives it only journaled
/// (#40 items 3, 4, 5, 7): children die with it, daemons are watched during
/// runs, tracefs, rpcbind registrations and Gluster's runtime files are
/// journaled, and cleanup finishes its undoing when its reader goes away.
mod leftovers;
/// Adaptive repetitions, time limits, resuming killed campaigns.
mod methodology;
/// Multi-client runs under `mpirun` (built with `--features mpi`).
#[cfg(feature = "mpi")]
mod mpi_runs;
/// A Gluster volume re-exported over NFS by the NFS-Ganesha storlab
/// starts (`export_of`), listed with libnfs up to the export; torn down,
/// and undone by `storlab cleanup` after a SIGKILL.
mod nfs_export;
/// The noisy-host caveat against the CPU accounts of a cgroup holding the
/// campaign: its own stack is not others, a CPU hog beside it is.
mod noisy_host;
/// Numbers at and beyond their parameter's range: located errors, saturating estimates.
mod param_ranges;
/// pgbench on a PostgreSQL cluster storlab starts and stops (or by dsn).
mod pgbench_runs;
/// Loop, ZFS and Gluster targets provisioned, run and torn down for real;
/// cleanup after SIGKILL; dangerous specs refused.
mod provision;
/// `storlab replicate`: replicas of a campaign in the same store, and what
/// show, the report and compare say of them.
mod replicas;
/// Software from another root (debootstrap roots, cached): PostgreSQL and
/// Gluster of another release beside the host's, check's refusals, and
/// what a killed build or campaign leaves for `storlab cleanup`.
mod roots;
/// The seed studies' workloads (matrix, smallfiles, tinywrites) through the real binary.
mod seed_workloads;
/// Sequential plans that look after every round: simulated and real
/// mock campaigns with a known truth, and what they cost in runs.
mod sequential;
/// The simulated cluster: hosts as namespaces on a bridge, shaped links, cleanup.
mod simcluster;
/// The embedded SQLite TPC-B-like workload and its consistency invariant.
mod sqlite_oltp_runs;
/// A loop image on a Gluster volume: provisioned in order, remounted as a
/// stack, torn down in reverse; undone by cleanup after SIGKILL.
mod stacking;
/// Time-based io runs that end at steady state, as fio's steadystate.
mod steady_state;
/// The schema-v3 store fixture: it opens, migrates and reports what it did.
mod store_fixture;
/// The suite's own rules: guards that cannot panic, scripts/test's packages.
mod suite;
/// Sweeps: variants, their labels on everything stored, zip, resuming,
/// located refusals.
mod sweeps;
/// Telemetry against ground truth: device bytes, a throttled read, the
/// page-cache warning, the CPU of Gluster's daemons.
mod telemetry;
/// `storlab show` through a pseudo-terminal at 80 and 100 columns, with
/// and without colour, on the quick campaign of a busy host.
mod terminal;
/// A loop device throttled by a cgroup (helpers for the tests against
/// ground truth).
mod throttle;
/// A verdict's words in the terminal, Markdown, HTML and JSON, from one
/// function.
mod verdict_words;
/// Verdicts, comparisons and the regression gate on real campaigns.
mod verdicts;
/// The vm-disk target: QEMU images served by qemu-storage-daemon on a
/// tmpfs and a Gluster volume, thin and full; cleanup after SIGKILL.
mod vm_disk;
