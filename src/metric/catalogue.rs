//! The declarations: one line per metric, in the order reports list the
//! headline ones (throughput and rates, times, latency, CPU), and the
//! latency histograms the percentile metrics come from.

use super::Direction::{HigherIsBetter as Higher, LowerIsBetter as Lower};
use super::Merge::{Max, Mean, Rate, Sum, SumOfRates, WeightedBy};
use super::{Direction, HistDef, Merge, MetricDef, Unit};

const fn def(
    name: &'static str,
    unit: Unit,
    direction: Direction,
    merge: Merge,
    help: &'static str,
) -> MetricDef {
    MetricDef {
        name,
        unit,
        direction,
        merge,
        headline: false,
        help,
        human: "",
    }
}

/// [`def`], shown in reports beside the primary metric.
const fn headline(
    name: &'static str,
    unit: Unit,
    direction: Direction,
    merge: Merge,
    help: &'static str,
) -> MetricDef {
    MetricDef {
        headline: true,
        ..def(name, unit, direction, merge, help)
    }
}

/// A latency statistic in nanoseconds: means merge as means (when no
/// histogram is at hand to recompute them), percentiles and maxima as the
/// largest part's (an upper bound of the merged figure).
const fn lat(name: &'static str, merge: Merge, help: &'static str) -> MetricDef {
    def(name, Unit::Nanoseconds, Lower, merge, help)
}

const fn lat_headline(name: &'static str, merge: Merge, help: &'static str) -> MetricDef {
    headline(name, Unit::Nanoseconds, Lower, merge, help)
}

macro_rules! catalogue {
    ($($id:ident = $def:expr;)*) => {
        $(pub static $id: MetricDef = $def;)*
        /// Every metric, in catalogue order.
        pub static ALL: &[&MetricDef] = &[$(&$id),*];
    };
}

use Unit::*;

catalogue! {
    // Throughput and rates.
    BW_BYTES_PER_S = headline("bw_bytes_per_s", BytesPerSec, Higher, Rate,
        "bytes read and written per second of the run").called("throughput");
    IOPS = headline("iops", OpsPerSec, Higher, Rate,
        "I/O operations per second of the run").called("IOPS");
    TPS = headline("tps", TransactionsPerSec, Higher, Rate,
        "committed transactions per second").called("TPS");
    OPS_PER_S = headline("ops_per_s", OpsPerSec, Higher, Rate,
        "operations per second (per operation with an `op` label)").called("operations/s");
    // Times of whole runs.
    TOTAL_S = headline("total_s", Seconds, Lower, Max,
        "time to write everything and sync it").called("total time");
    WALL_S = headline("wall_s", Seconds, Lower, Max,
        "wall-clock time of the command").called("wall time");
    INIT_SECONDS = headline("init_seconds", Seconds, Lower, Max,
        "time to initialise the database (in the run that did it)").called("init time");
    // Latency: the `lat` histogram's figures (response latency, from the
    // scheduled start in open-loop runs).
    LAT_MEAN_NS = lat_headline("lat_mean_ns", Mean, "mean latency of an operation or transaction").called("mean latency");
    LAT_P50_NS = lat("lat_p50_ns", Max, "median latency").called("median latency");
    LAT_P90_NS = lat("lat_p90_ns", Max, "90th percentile latency").called("p90 latency");
    LAT_P99_NS = lat_headline("lat_p99_ns", Max, "99th percentile latency").called("p99 latency");
    LAT_P999_NS = lat_headline("lat_p999_ns", Max, "99.9th percentile latency").called("p99.9 latency");
    LAT_MAX_NS = lat("lat_max_ns", Max, "largest latency").called("max latency");
    // Open-loop runs: service latency (from issue) and schedule lag.
    SERVICE_LAT_MEAN_NS = lat("service_lat_mean_ns", Mean, "mean service latency (from issue) of an open-loop run");
    SERVICE_LAT_P50_NS = lat("service_lat_p50_ns", Max, "median service latency");
    SERVICE_LAT_P90_NS = lat("service_lat_p90_ns", Max, "90th percentile service latency");
    SERVICE_LAT_P99_NS = lat_headline("service_lat_p99_ns", Max, "99th percentile service latency");
    SERVICE_LAT_P999_NS = lat_headline("service_lat_p999_ns", Max, "99.9th percentile service latency");
    SERVICE_LAT_MAX_NS = lat("service_lat_max_ns", Max, "largest service latency");
    SCHED_LAG_MEAN_NS = lat("sched_lag_mean_ns", Mean, "mean delay of an issue behind its scheduled time");
    SCHED_LAG_MAX_NS = lat_headline("sched_lag_max_ns", Max, "largest delay of an issue behind its scheduled time");
    // CPU.
    CPU_NS_PER_OP = headline("cpu_ns_per_op", Nanoseconds, Lower, WeightedBy(&OPS),
        "CPU time (user + system) per operation");
    // Write volume per transaction of a database workload.
    WAL_BYTES_PER_TX = headline("wal_bytes_per_tx", BytesPerTransaction, Lower, Mean,
        "WAL bytes the server generated per committed transaction");
    CPU_USER_S = def("cpu_user_s", Seconds, Lower, Sum, "user CPU time");
    CPU_SYS_S = def("cpu_sys_s", Seconds, Lower, Sum, "system CPU time");
    // Amounts and times.
    BYTES = def("bytes", Bytes, Higher, Sum, "bytes read and written");
    OPS = def("ops", Ops, Higher, Sum, "operations done (per operation with an `op` label)");
    ELAPSED_S = def("elapsed_s", Seconds, Lower, Max,
        "measured time (of a phase with an `op` label)");
    // Directions of mixed I/O.
    READ_BW_BYTES_PER_S = def("read_bw_bytes_per_s", BytesPerSec, Higher, Rate, "bytes read per second");
    WRITE_BW_BYTES_PER_S = def("write_bw_bytes_per_s", BytesPerSec, Higher, Rate, "bytes written per second");
    TRIM_BW_BYTES_PER_S = def("trim_bw_bytes_per_s", BytesPerSec, Higher, Rate, "bytes trimmed per second");
    READ_LAT_MEAN_NS = lat("read_lat_mean_ns", Mean, "mean read latency");
    READ_LAT_P50_NS = lat("read_lat_p50_ns", Max, "median read latency");
    READ_LAT_P90_NS = lat("read_lat_p90_ns", Max, "90th percentile read latency");
    READ_LAT_P99_NS = lat("read_lat_p99_ns", Max, "99th percentile read latency");
    READ_LAT_P999_NS = lat("read_lat_p999_ns", Max, "99.9th percentile read latency");
    READ_LAT_MAX_NS = lat("read_lat_max_ns", Max, "largest read latency");
    WRITE_LAT_MEAN_NS = lat("write_lat_mean_ns", Mean, "mean write latency");
    WRITE_LAT_P50_NS = lat("write_lat_p50_ns", Max, "median write latency");
    WRITE_LAT_P90_NS = lat("write_lat_p90_ns", Max, "90th percentile write latency");
    WRITE_LAT_P99_NS = lat("write_lat_p99_ns", Max, "99th percentile write latency");
    WRITE_LAT_P999_NS = lat("write_lat_p999_ns", Max, "99.9th percentile write latency");
    WRITE_LAT_MAX_NS = lat("write_lat_max_ns", Max, "largest write latency");
    TRIM_LAT_MEAN_NS = lat("trim_lat_mean_ns", Mean, "mean trim latency");
    TRIM_LAT_P50_NS = lat("trim_lat_p50_ns", Max, "median trim latency");
    TRIM_LAT_P90_NS = lat("trim_lat_p90_ns", Max, "90th percentile trim latency");
    TRIM_LAT_P99_NS = lat("trim_lat_p99_ns", Max, "99th percentile trim latency");
    TRIM_LAT_P999_NS = lat("trim_lat_p999_ns", Max, "99.9th percentile trim latency");
    TRIM_LAT_MAX_NS = lat("trim_lat_max_ns", Max, "largest trim latency");
    SYNC_LAT_MEAN_NS = lat("sync_lat_mean_ns", Mean, "mean fsync/fdatasync latency");
    SYNC_LAT_P50_NS = lat("sync_lat_p50_ns", Max, "median fsync/fdatasync latency");
    SYNC_LAT_P90_NS = lat("sync_lat_p90_ns", Max, "90th percentile fsync/fdatasync latency");
    SYNC_LAT_P99_NS = lat("sync_lat_p99_ns", Max, "99th percentile fsync/fdatasync latency");
    SYNC_LAT_P999_NS = lat("sync_lat_p999_ns", Max, "99.9th percentile fsync/fdatasync latency");
    SYNC_LAT_MAX_NS = lat("sync_lat_max_ns", Max, "largest fsync/fdatasync latency");
    // Steady state (io with `steadystate`).
    SS_REACHED = def("ss_reached", Flag, Higher, Mean, "1 if the run reached steady state");
    SS_TIME_S = def("ss_time_s", Seconds, Lower, Max, "seconds of measurement until steady state");
    SS_BW_BYTES_PER_S = def("ss_bw_bytes_per_s", BytesPerSec, Higher, SumOfRates,
        "mean throughput of the steady window");
    SS_IOPS = def("ss_iops", OpsPerSec, Higher, SumOfRates, "mean IOPS of the steady window");
    SS_RANGE_PCT = def("ss_range_pct", Percent, Lower, Mean,
        "the criterion's last value: the window's range in % of its mean");
    SS_SLOPE_PCT = def("ss_slope_pct", Percent, Lower, Mean,
        "the criterion's last value: the window's slope in % of its mean");
    SS_RANGE_BYTES_PER_S = def("ss_range_bytes_per_s", BytesPerSec, Lower, Mean,
        "the criterion's last value: the window's throughput range");
    SS_RANGE_IOPS = def("ss_range_iops", OpsPerSec, Lower, Mean,
        "the criterion's last value: the window's IOPS range");
    SS_SLOPE_BYTES_PER_S_PER_S = def("ss_slope_bytes_per_s_per_s", BytesPerSecPerSec, Lower, Mean,
        "the criterion's last value: the window's throughput slope");
    SS_SLOPE_IOPS_PER_S = def("ss_slope_iops_per_s", OpsPerSecPerSec, Lower, Mean,
        "the criterion's last value: the window's IOPS slope");
    // matrix.
    GEOMEAN_BW_BYTES_PER_S = def("geomean_bw_bytes_per_s", BytesPerSec, Higher, SumOfRates,
        "geometric mean of the cells' throughput (per test with a `test` label)").called("throughput (geometric mean)");
    CELLS = def("cells", Cells, Higher, Mean, "matrix cells measured");
    // smallfiles.
    READDIR_ENTRIES = def("readdir_entries", Entries, Higher, Sum, "directory entries read by readdir");
    // tinywrites.
    WRITE_S = def("write_s", Seconds, Lower, Max, "time of the writes, before the sync");
    SYNC_S = def("sync_s", Seconds, Lower, Max, "time of the final sync");
    WRITES = def("writes", Ops, Higher, Sum, "write calls made");
    BYTES_ON_DISK = def("bytes_on_disk", Bytes, Lower, Sum, "size of the written file");
    COMPRESSION_RATIO = def("compression_ratio", Ratio, Higher, Mean, "bytes written ÷ bytes on disk");
    // OLTP (pgbench, sqlite-oltp).
    TRANSACTIONS = def("transactions", Transactions, Higher, Sum, "committed transactions");
    FAILED_TRANSACTIONS = def("failed_transactions", Transactions, Lower, Sum, "failed transactions");
    HISTORY_ROWS = def("history_rows", Rows, Higher, Sum, "rows in the history table after the run");
    PREWARM_TPS = def("prewarm_tps", TransactionsPerSec, Higher, SumOfRates, "tps of the unmeasured prewarm");
    LAT_STDDEV_NS = lat("lat_stddev_ns", Mean, "standard deviation of the transaction latency");
    INITIAL_CONNECTION_S = def("initial_connection_s", Seconds, Lower, Max, "time to open the connections");
    LOGGED_TRANSACTIONS = def("logged_transactions", Transactions, Higher, Sum,
        "transactions in pgbench's per-transaction log, which the latency percentiles come from (all of them, or a sample with sampling_rate)");
    LATE_TRANSACTIONS = def("late_transactions", Transactions, Lower, Sum,
        "transactions that took longer than latency_limit, from their scheduled start when rate-limited (pgbench -L)");
    SKIPPED_TRANSACTIONS = def("skipped_transactions", Transactions, Lower, Sum,
        "transactions pgbench skipped because they were already latency_limit behind schedule (-R with -L)");
    // pgbench -i by step (pgbench's own timing of each step).
    INIT_DROP_S = def("init_drop_s", Seconds, Lower, Max, "pgbench -i: dropping old tables");
    INIT_TABLES_S = def("init_tables_s", Seconds, Lower, Max, "pgbench -i: creating the tables");
    INIT_GENERATE_S = def("init_generate_s", Seconds, Lower, Max,
        "pgbench -i: generating the data (client-side with step g, server-side with G)");
    INIT_VACUUM_S = def("init_vacuum_s", Seconds, Lower, Max, "pgbench -i: vacuuming the tables");
    INIT_KEYS_S = def("init_keys_s", Seconds, Lower, Max, "pgbench -i: creating the primary keys");
    INIT_FOREIGN_KEYS_S = def("init_foreign_keys_s", Seconds, Lower, Max, "pgbench -i: creating the foreign keys (step f)");
    // What a PostgreSQL server wrote during a measured run (its statistics
    // views before and after).
    WAL_BYTES = def("wal_bytes", Bytes, Lower, Sum, "WAL the server generated (the advance of its WAL insert position)");
    WAL_RECORDS = def("wal_records", Records, Lower, Sum, "WAL records the server generated (pg_stat_wal, PostgreSQL 14+)");
    WAL_FPI = def("wal_fpi", Records, Lower, Sum, "full-page images written into the WAL (pg_stat_wal, PostgreSQL 14+)");
    WAL_SYNCS = def("wal_syncs", Ops, Lower, Sum, "fsync/fdatasync calls on WAL files (pg_stat_wal, PostgreSQL 14+)");
    DATA_FSYNCS = def("data_fsyncs", Ops, Lower, Sum, "fsync calls on data files (pg_stat_io, PostgreSQL 16+)");
    CHECKPOINTS_TIMED = def("checkpoints_timed", Checkpoints, Lower, Sum, "checkpoints started by checkpoint_timeout");
    CHECKPOINTS_REQUESTED = def("checkpoints_requested", Checkpoints, Lower, Sum,
        "checkpoints requested (max_wal_size reached, or asked for)");
    CHECKPOINT_WRITE_BYTES = def("checkpoint_write_bytes", Bytes, Lower, Sum, "data pages the checkpointer wrote");
    BGWRITER_WRITE_BYTES = def("bgwriter_write_bytes", Bytes, Lower, Sum, "data pages the background writer wrote");
    BACKEND_WRITE_BYTES = def("backend_write_bytes", Bytes, Lower, Sum, "data pages client backends wrote themselves");
    DATA_BYTES_PER_TX = def("data_bytes_per_tx", BytesPerTransaction, Lower, Mean,
        "data pages written during the run (checkpointer, background writer, backends) per transaction; pages still dirty at the end are not counted");
    TEMP_BYTES = def("temp_bytes", Bytes, Lower, Sum, "temporary file bytes queries wrote (pg_stat_database)");
    // Block devices under the files, as fio's disk_util reports them
    // (labelled `device`). Ranks on one host see the same device: the
    // largest figure is the device's own.
    DISK_UTIL_PCT = def("disk_util_pct", Percent, Lower, Max, "share of the run the device was busy");
    DISK_READ_IOS = def("disk_read_ios", Ops, Higher, Max, "reads the device completed during the run");
    DISK_WRITE_IOS = def("disk_write_ios", Ops, Higher, Max, "writes the device completed during the run");
    DISK_READ_MERGES = def("disk_read_merges", Ops, Higher, Max, "reads the device's queue merged into others");
    DISK_WRITE_MERGES = def("disk_write_merges", Ops, Higher, Max, "writes the device's queue merged into others");
    DISK_READ_TICKS_S = def("disk_read_ticks_s", Seconds, Lower, Max, "time the device's reads spent queued and in service");
    DISK_WRITE_TICKS_S = def("disk_write_ticks_s", Seconds, Lower, Max, "time the device's writes spent queued and in service");
    DISK_IN_QUEUE_S = def("disk_in_queue_s", Seconds, Lower, Max, "time requests spent in the device's queue, weighted by their number");
    // command.
    MAX_RSS_BYTES = def("max_rss_bytes", Bytes, Lower, Max, "peak resident memory of the command");
    // What the workload itself read and wrote (the denominators of the
    // device figures below).
    READ_BYTES = def("read_bytes", Bytes, Higher, Sum, "bytes the workload read");
    SYNCS = def("syncs", Ops, Lower, Sum,
        "fsync, fdatasync, msync or sync(2) calls the workload made during the run, O_SYNC writes counted one each (the denominator of dev_flushes)");
    WRITE_BYTES = def("write_bytes", Bytes, Higher, Sum, "bytes the workload wrote");
    WORKING_SET_BYTES = def("working_set_bytes", Bytes, Lower, Max,
        "bytes of data the workload works on (its files, or the database at its scale)");
    // Telemetry: what the system did during the run, sampled every second
    // (src/measure/telemetry/). Device figures are labelled `device`; the
    // same figures without a label are the devices at the bottom of the
    // target's device chain (the physical ones). Ranks on one host see the
    // same devices and the same host: the largest figure is the host's own.
    DEV_READ_BYTES = def("dev_read_bytes", Bytes, Lower, Max, "bytes the device read during the run");
    DEV_WRITE_BYTES = def("dev_write_bytes", Bytes, Lower, Max, "bytes the device wrote during the run");
    DEV_READS = def("dev_reads", Ops, Lower, Max, "reads the device completed during the run");
    DEV_WRITES = def("dev_writes", Ops, Lower, Max, "writes the device completed during the run");
    DEV_FLUSHES = def("dev_flushes", Ops, Lower, Max,
        "flush requests the device completed during the run (/proc/diskstats): what made synced data durable on a device with a volatile write cache");
    DEV_READ_BW_BYTES_PER_S = def("dev_read_bw_bytes_per_s", BytesPerSec, Higher, Mean,
        "bytes the device read per second of the run");
    DEV_WRITE_BW_BYTES_PER_S = def("dev_write_bw_bytes_per_s", BytesPerSec, Higher, Mean,
        "bytes the device wrote per second of the run");
    DEV_UTIL_PCT = def("dev_util_pct", Percent, Lower, Max, "share of the run the device was busy");
    DEV_QUEUE_DEPTH = def("dev_queue_depth", Requests, Lower, Max,
        "mean number of requests in the device's queue and in service");
    DEV_AWAIT_NS = def("dev_await_ns", Nanoseconds, Lower, Max,
        "mean time a device request spent queued and in service");
    // The block layer's own view (src/measure/telemetry/blocktrace/): per
    // device (`device`) and operation (`op`: read, write, flush, discard),
    // from the kernel's block tracepoints. Request times are HDR
    // histograms, merged exactly like the workload's.
    DEV_LAT_MEAN_NS = lat("dev_lat_mean_ns", Mean, "mean time of a device request from issue to completion (`device`, `op`)");
    DEV_LAT_P50_NS = lat("dev_lat_p50_ns", Max, "median time of a device request from issue to completion");
    DEV_LAT_P90_NS = lat("dev_lat_p90_ns", Max, "90th percentile time of a device request from issue to completion");
    DEV_LAT_P99_NS = lat("dev_lat_p99_ns", Max, "99th percentile time of a device request from issue to completion");
    DEV_LAT_P999_NS = lat("dev_lat_p999_ns", Max, "99.9th percentile time of a device request from issue to completion");
    DEV_LAT_MAX_NS = lat("dev_lat_max_ns", Max, "longest time of a device request from issue to completion");
    DEV_QUEUE_LAT_MEAN_NS = lat("dev_queue_lat_mean_ns", Mean,
        "mean time a device request waited in the I/O scheduler's queue, from insert to issue (`device`, `op`; in stores of 2026-11-26 and before: tracing the inserts cost a fast disk a third of its IOPS)");
    DEV_QUEUE_LAT_P50_NS = lat("dev_queue_lat_p50_ns", Max, "median time a device request waited in the scheduler's queue");
    DEV_QUEUE_LAT_P90_NS = lat("dev_queue_lat_p90_ns", Max, "90th percentile time a device request waited in the scheduler's queue");
    DEV_QUEUE_LAT_P99_NS = lat("dev_queue_lat_p99_ns", Max, "99th percentile time a device request waited in the scheduler's queue");
    DEV_QUEUE_LAT_P999_NS = lat("dev_queue_lat_p999_ns", Max, "99.9th percentile time a device request waited in the scheduler's queue");
    DEV_QUEUE_LAT_MAX_NS = lat("dev_queue_lat_max_ns", Max, "longest time a device request waited in the scheduler's queue");
    DEV_REQUESTS = def("dev_requests", Ops, Lower, Max,
        "requests issued to the device during the run (`device`, `op`), counted at the block tracepoints");
    DEV_REQUEST_BYTES = def("dev_request_bytes", Bytes, Higher, Mean,
        "mean size of a request issued to the device (`device`, `op`)");
    DEV_FLUSH_REQUESTS = def("dev_flush_requests", Ops, Lower, Max,
        "requests that flushed the device's write cache: flush requests and writes with a preflush (`device`), counted at the block tracepoints");
    DEV_FUA_REQUESTS = def("dev_fua_requests", Ops, Lower, Max,
        "writes issued with FUA, forced unit access (`device`)");
    DEV_INFLIGHT = def("dev_inflight", Requests, Lower, Max,
        "mean number of requests between issue and completion at the device (`device`): the sum of their times over the run's");
    DEV_WRITE_CACHE = def("dev_write_cache", Flag, Higher, Max,
        "1 if the device has a volatile write cache (`write back` in sysfs): only such a device is sent flushes");
    DEV_READ_RATIO = def("dev_read_ratio", Ratio, Higher, Mean,
        "bytes the device read ÷ bytes the workload read (near 0: the reads came from memory)");
    WRITE_AMPLIFICATION = def("write_amplification", Ratio, Lower, Mean,
        "bytes the device wrote ÷ bytes the workload wrote");
    DEV_WRITE_BYTES_PER_TX = def("dev_write_bytes_per_tx", BytesPerTransaction, Lower, Mean,
        "bytes the device wrote per committed transaction");
    CPU_BUSY_PCT = def("cpu_busy_pct", Percent, Lower, Max, "host CPU busy, in % of all its cores");
    CPU_IOWAIT_PCT = def("cpu_iowait_pct", Percent, Lower, Max, "host CPU idle while I/O was outstanding, in % of all its cores");
    CPU_STEAL_PCT = def("cpu_steal_pct", Percent, Lower, Max, "host CPU taken by the hypervisor, in % of all its cores");
    CPU_OTHERS_PCT = def("cpu_others_pct", Percent, Lower, Max,
        "host CPU used by processes other than the campaign's (storlab, the programs it ran, its targets' daemons, the kernel threads working for its devices), interrupts and the kernel's other threads left out, in % of all cores");
    CPU_KERNEL_PCT = def("cpu_kernel_pct", Percent, Lower, Max,
        "host CPU of interrupts and of kernel threads working for no device of the campaign (kblockd, events, RCU, reclaim), in % of all cores");
    PROC_CPU_S = def("proc_cpu_s", Seconds, Lower, Max, "CPU time (user + system) of a process and its children (`process` label)");
    PROC_CPU_PCT = def("proc_cpu_pct", Percent, Lower, Max, "CPU of a process, in % of one core (`process` label)");
    PROC_BUSIEST_THREAD_PCT = def("proc_busiest_thread_pct", Percent, Lower, Max,
        "CPU of a process's busiest thread, in % of one core (`process` label)");
    PROC_BUSIEST_THREAD_WANTED_PCT = def("proc_busiest_thread_wanted_pct", Percent, Lower, Max,
        "share of the run a process's thread ran or waited on a run queue for a CPU, the largest of its threads (`process` label): near 100% it was CPU-bound, whether it had a core or waited for one");
    MEM_PAGE_CACHE_MAX_BYTES = def("mem_page_cache_max_bytes", Bytes, Lower, Max, "largest page cache during the run");
    MEM_DIRTY_BYTES = def("mem_dirty_bytes", Bytes, Lower, Max, "dirty page cache, over time");
    MEM_WRITEBACK_BYTES = def("mem_writeback_bytes", Bytes, Lower, Max, "page cache under writeback, over time");
    MEM_DIRTY_MAX_BYTES = def("mem_dirty_max_bytes", Bytes, Lower, Max, "largest dirty page cache during the run");
    MEM_WRITEBACK_MAX_BYTES = def("mem_writeback_max_bytes", Bytes, Lower, Max, "largest page cache under writeback during the run");
    MEM_DIRTY_START_BYTES = def("mem_dirty_start_bytes", Bytes, Lower, Max, "dirty and writeback page cache when the run started");
    MEM_DIRTY_END_BYTES = def("mem_dirty_end_bytes", Bytes, Lower, Max, "dirty and writeback page cache when the run ended");
    MEM_AVAILABLE_BYTES = def("mem_available_bytes", Bytes, Higher, Max, "memory available for the page cache when the run started");
    PSI_IO_SOME_AVG_PCT = def("psi_io_some_avg_pct", Percent, Lower, Max, "share of the run some task was stalled on I/O (PSI)");
    PSI_IO_FULL_AVG_PCT = def("psi_io_full_avg_pct", Percent, Lower, Max, "share of the run every task was stalled on I/O (PSI)");
    PSI_MEMORY_SOME_AVG_PCT = def("psi_memory_some_avg_pct", Percent, Lower, Max, "share of the run some task was stalled on memory (PSI)");
    PSI_MEMORY_FULL_AVG_PCT = def("psi_memory_full_avg_pct", Percent, Lower, Max, "share of the run every task was stalled on memory (PSI)");
    PSI_CPU_SOME_AVG_PCT = def("psi_cpu_some_avg_pct", Percent, Lower, Max, "share of the run some task waited for a CPU (PSI)");
    ARC_HITS = def("arc_hits", Ops, Higher, Max, "ZFS ARC hits during the run");
    ARC_MISSES = def("arc_misses", Ops, Lower, Max, "ZFS ARC misses during the run");
    ARC_MAX_BYTES = def("arc_max_bytes", Bytes, Higher, Max, "the ZFS ARC's size limit (c_max)");
    // Where the reads came from (src/measure/layers/): per layer of the
    // target's stack (labelled `layer`, and `brick` or `device` for one
    // part of a layer), what it was asked and what it served itself.
    // Read on rank 0's host from each layer's own counters.
    LAYER_READ_BYTES = def("layer_read_bytes", Bytes, Lower, Max,
        "bytes asked of a layer of the target's stack during the run (`layer` label): what the layer above passed down");
    LAYER_SERVED_BYTES = def("layer_served_bytes", Bytes, Higher, Max,
        "bytes a layer of the target's stack served itself during the run: what it was asked less what it passed down (never below 0; the bottom layer serves all it is asked)");
    LAYER_READS = def("layer_reads", Ops, Lower, Max,
        "read requests asked of a layer of the target's stack during the run, where its counters count them");
    TELEMETRY_CPU_PCT = def("telemetry_cpu_pct", Percent, Lower, Max, "CPU the telemetry sampler used, in % of one core");
    // Multi-client runs: the ranks' ends after the start barrier.
    FIRST_DONE_S = def("first_done_s", Seconds, Lower, Max, "when the first rank finished, after the start barrier");
    LAST_DONE_S = def("last_done_s", Seconds, Lower, Max, "when the last rank finished, after the start barrier");
    DONE_SPREAD_S = def("done_spread_s", Seconds, Lower, Max, "time between the first and the last rank's end");
}

const fn hist(name: &'static str, help: &'static str, m: [&'static MetricDef; 6]) -> HistDef {
    HistDef {
        name,
        help,
        mean: m[0],
        percentiles: [(50.0, m[1]), (90.0, m[2]), (99.0, m[3]), (99.9, m[4])],
        max: m[5],
    }
}

/// The steady-state criterion of an `io` workload that names none (fio's
/// default when only `ss_dur` is given): the detector judges by it, and
/// the analysis names it when the stored parameters leave it out.
pub const DEFAULT_STEADY_CRITERION: &str = "iops_slope:0.01%";

pub static LAT: HistDef = hist(
    "lat",
    "latency of each operation or transaction",
    [
        &LAT_MEAN_NS,
        &LAT_P50_NS,
        &LAT_P90_NS,
        &LAT_P99_NS,
        &LAT_P999_NS,
        &LAT_MAX_NS,
    ],
);
pub static SERVICE_LAT: HistDef = hist(
    "service_lat",
    "service latency (from issue) of each operation of an open-loop run",
    [
        &SERVICE_LAT_MEAN_NS,
        &SERVICE_LAT_P50_NS,
        &SERVICE_LAT_P90_NS,
        &SERVICE_LAT_P99_NS,
        &SERVICE_LAT_P999_NS,
        &SERVICE_LAT_MAX_NS,
    ],
);
pub static READ_LAT: HistDef = hist(
    "read_lat",
    "latency of each read",
    [
        &READ_LAT_MEAN_NS,
        &READ_LAT_P50_NS,
        &READ_LAT_P90_NS,
        &READ_LAT_P99_NS,
        &READ_LAT_P999_NS,
        &READ_LAT_MAX_NS,
    ],
);
pub static WRITE_LAT: HistDef = hist(
    "write_lat",
    "latency of each write",
    [
        &WRITE_LAT_MEAN_NS,
        &WRITE_LAT_P50_NS,
        &WRITE_LAT_P90_NS,
        &WRITE_LAT_P99_NS,
        &WRITE_LAT_P999_NS,
        &WRITE_LAT_MAX_NS,
    ],
);
pub static TRIM_LAT: HistDef = hist(
    "trim_lat",
    "latency of each trim",
    [
        &TRIM_LAT_MEAN_NS,
        &TRIM_LAT_P50_NS,
        &TRIM_LAT_P90_NS,
        &TRIM_LAT_P99_NS,
        &TRIM_LAT_P999_NS,
        &TRIM_LAT_MAX_NS,
    ],
);
pub static SYNC_LAT: HistDef = hist(
    "sync_lat",
    "latency of each fsync or fdatasync",
    [
        &SYNC_LAT_MEAN_NS,
        &SYNC_LAT_P50_NS,
        &SYNC_LAT_P90_NS,
        &SYNC_LAT_P99_NS,
        &SYNC_LAT_P999_NS,
        &SYNC_LAT_MAX_NS,
    ],
);

pub static DEV_LAT: HistDef = hist(
    "dev_lat",
    "time of each device request from issue to completion, per device and operation (block tracepoints)",
    [
        &DEV_LAT_MEAN_NS,
        &DEV_LAT_P50_NS,
        &DEV_LAT_P90_NS,
        &DEV_LAT_P99_NS,
        &DEV_LAT_P999_NS,
        &DEV_LAT_MAX_NS,
    ],
);
pub static DEV_QUEUE_LAT: HistDef = hist(
    "dev_queue_lat",
    "time each device request waited in the I/O scheduler's queue, from insert to issue, per device and operation (older stores only: no longer traced)",
    [
        &DEV_QUEUE_LAT_MEAN_NS,
        &DEV_QUEUE_LAT_P50_NS,
        &DEV_QUEUE_LAT_P90_NS,
        &DEV_QUEUE_LAT_P99_NS,
        &DEV_QUEUE_LAT_P999_NS,
        &DEV_QUEUE_LAT_MAX_NS,
    ],
);

/// Every histogram, in the order reports draw them.
pub static HISTOGRAMS: &[&HistDef] = &[
    &LAT,
    &SERVICE_LAT,
    &READ_LAT,
    &WRITE_LAT,
    &TRIM_LAT,
    &SYNC_LAT,
    &DEV_LAT,
    &DEV_QUEUE_LAT,
];

#[cfg(test)]
mod tests {
    use super::super::{headlines, lookup, lookup_hist};
    use super::*;

    #[test]
    fn names_are_unique_snake_case_and_found() {
        for d in ALL {
            assert!(
                d.name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
                "{}",
                d.name
            );
            assert_eq!(
                ALL.iter().filter(|x| x.name == d.name).count(),
                1,
                "{}",
                d.name
            );
            assert!(std::ptr::eq(lookup(d.name).unwrap(), *d));
            assert!(!d.help.is_empty(), "{}", d.name);
        }
        assert_eq!(lookup("write_64k_4k_bw_bytes_per_s"), None);
    }

    #[test]
    fn headlines_keep_the_order_reports_have_always_shown() {
        let names: Vec<&str> = headlines().map(|d| d.name).collect();
        assert_eq!(
            names,
            [
                "bw_bytes_per_s",
                "iops",
                "tps",
                "ops_per_s",
                "total_s",
                "wall_s",
                "init_seconds",
                "lat_mean_ns",
                "lat_p99_ns",
                "lat_p999_ns",
                "service_lat_p99_ns",
                "service_lat_p999_ns",
                "sched_lag_max_ns",
                "cpu_ns_per_op",
                "wal_bytes_per_tx",
            ]
        );
    }

    #[test]
    fn a_histogram_names_its_metrics() {
        for h in HISTOGRAMS {
            assert!(std::ptr::eq(lookup_hist(h.name).unwrap(), *h));
            let stats = ["mean", "p50", "p90", "p99", "p999", "max"];
            for (m, stat) in h.metrics().zip(stats) {
                assert_eq!(m.name, format!("{}_{stat}_ns", h.name));
                assert!(ALL.iter().any(|d| std::ptr::eq(*d, m)));
                assert_eq!(m.unit, h.unit());
            }
        }
    }

    #[test]
    fn rates_merge_as_rates_and_amounts_add() {
        for d in ALL {
            if d.unit.is_rate() {
                assert!(matches!(d.merge, Rate | SumOfRates | Mean), "{}", d.name);
            }
            if matches!(d.merge, Rate | SumOfRates) {
                assert!(d.unit.is_rate(), "{}", d.name);
            }
        }
    }
}
