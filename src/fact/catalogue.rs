//! The declarations: the host's facts (a campaign's environment), then a
//! target's as `crate::provision::facts` and the target kinds record them,
//! then a run's.

use super::Changes::{Always, Never, WhereStorlabNamesIt};
use super::FactUnit::{Bytes, Count, Device, Facts, Flag, Table, Text};
use super::Subject::{Host, Run, Target};
use super::{Changes, FactDef, FactUnit, Subject};

const fn fact(
    subject: Subject,
    name: &'static str,
    unit: FactUnit,
    changes: Changes,
    reads_back: Option<&'static str>,
    about: &'static str,
) -> FactDef {
    FactDef {
        name,
        subject,
        unit,
        changes,
        reads_back,
        about,
    }
}

pub const HOSTNAME: FactDef = fact(Host, "hostname", Text, Never, None, "the host's name");
pub const CPU_MODEL: FactDef = fact(
    Host,
    "cpu_model",
    Text,
    Never,
    None,
    "the CPU's model name (/proc/cpuinfo)",
);
pub const CPU_COUNT: FactDef = fact(
    Host,
    "cpu_count",
    Count,
    Never,
    None,
    "CPUs storlab may use",
);
pub const MEMORY_BYTES: FactDef = fact(
    Host,
    "memory_bytes",
    Bytes,
    Never,
    None,
    "the host's memory (MemTotal)",
);
pub const KERNEL: FactDef = fact(Host, "kernel", Text, Never, None, "the kernel's release");
pub const DISTRIBUTION: FactDef = fact(
    Host,
    "distribution",
    Text,
    Never,
    None,
    "the distribution (PRETTY_NAME of /etc/os-release)",
);
pub const STORLAB_VERSION: FactDef = fact(
    Host,
    "storlab_version",
    Text,
    Never,
    None,
    "the storlab that ran the campaign, with its commit and features",
);
pub const ROOT: FactDef = fact(
    Host,
    "root",
    Flag,
    Never,
    None,
    "whether storlab ran as root",
);

pub const PATH: FactDef = fact(
    Target,
    "path",
    Text,
    WhereStorlabNamesIt,
    Some("path"),
    "the directory the workloads ran in",
);
pub const FS_TYPE: FactDef = fact(
    Target,
    "fs_type",
    Text,
    Never,
    Some("fs"),
    "the filesystem holding it, as mountinfo says",
);
pub const MOUNT_POINT: FactDef = fact(
    Target,
    "mount_point",
    Text,
    WhereStorlabNamesIt,
    None,
    "where that filesystem is mounted",
);
pub const MOUNT_SOURCE: FactDef = fact(
    Target,
    "mount_source",
    Text,
    WhereStorlabNamesIt,
    None,
    "what is mounted there (a device, a volume, an export)",
);
pub const MOUNT_OPTIONS: FactDef = fact(
    Target,
    "mount_options",
    Text,
    Never,
    Some("mount_options"),
    "the mount's own options, as the kernel shows them",
);
pub const SUPER_OPTIONS: FactDef = fact(
    Target,
    "super_options",
    Text,
    Never,
    Some("mount_options"),
    "the filesystem's options, as the kernel shows them",
);
pub const BLOCK_DEVICE: FactDef = fact(
    Target,
    "block_device",
    Device,
    Never,
    None,
    "the whole disk under the filesystem: name, model, rotational, scheduler",
);
pub const SIZE_BYTES: FactDef = fact(
    Target,
    "size_bytes",
    Bytes,
    Never,
    Some("size"),
    "the filesystem's size",
);
pub const FREE_BYTES: FactDef = fact(
    Target,
    "free_bytes",
    Bytes,
    Always,
    None,
    "the space left on it when it was read",
);
pub const ALLOCATION: FactDef = fact(
    Target,
    "allocation",
    Text,
    Never,
    Some("allocation"),
    "how the image was allocated: thin or preallocated",
);
pub const IMAGE_SIZE_BYTES: FactDef = fact(
    Target,
    "image_size_bytes",
    Bytes,
    Never,
    Some("size"),
    "the image file's size",
);
pub const IMAGE_ALLOCATED_BYTES: FactDef = fact(
    Target,
    "image_allocated_bytes",
    Bytes,
    WhereStorlabNamesIt,
    Some("allocation"),
    "the blocks the image file took",
);
pub const IMAGE_DIR_FACTS: FactDef = fact(
    Target,
    "image_dir_facts",
    Facts,
    Never,
    None,
    "the facts of the directory holding the image",
);
pub const BRICK_DIR_FACTS: FactDef = fact(
    Target,
    "brick_dir_facts",
    Facts,
    Never,
    None,
    "the facts of the directory holding the bricks",
);
pub const VOLUME_INFO: FactDef = fact(
    Target,
    "volume_info",
    Table,
    Never,
    None,
    "`gluster volume info`: type (after `replica`, `disperse`), bricks, options",
);
pub const ZFS_PROPERTIES: FactDef = fact(
    Target,
    "zfs_properties",
    Table,
    Never,
    Some("properties"),
    "each dataset property's value and source, as `zfs get` says",
);
pub const EFFECTIVE_OPTIONS: FactDef = fact(
    Target,
    "effective_options",
    Table,
    Never,
    Some("options"),
    "each volume option's value in force, as `gluster volume get` says",
);
pub const ZFS_FLAVOUR: FactDef = fact(
    Target,
    "zfs_flavour",
    Text,
    Never,
    None,
    "kernel ZFS or zfs-fuse",
);
/// A name ending in `_version`: the version of a program that served the
/// target or ran a workload (`gluster_version`, `fio_version`).
pub const VERSION: FactDef = fact(
    Target,
    "_version",
    Text,
    Never,
    None,
    "a program's version (the name is the program's, then `_version`)",
);
/// `software_version.PROGRAM`: the release a system storlab can take from
/// another root reports (`software_version.gluster`, `…postgresql`).
pub const SOFTWARE_VERSION: FactDef = fact(
    Target,
    "software_version.",
    Text,
    Never,
    None,
    "the release the software reports, labelled by program (`software_version.gluster` = `11.1`; a pgbench run's `software_version.postgresql`): what names the variants of a swept `root`",
);

pub const TELEMETRY_DEVICES: FactDef = fact(
    Run,
    "telemetry_devices",
    Text,
    WhereStorlabNamesIt,
    None,
    "the devices telemetry watched, top to bottom",
);
/// A name beginning `telemetry_process.`: a process telemetry watched, and why.
pub const TELEMETRY_PROCESS: FactDef = fact(
    Run,
    "telemetry_process.",
    Text,
    Never,
    None,
    "a process telemetry watched (the name follows the dot), and why",
);
pub const BLOCK_TRACE: FactDef = fact(
    Run,
    "block_trace",
    Text,
    Never,
    None,
    "how device latency was measured: bpftrace's version and the devices traced, or why the block requests were not traced (then /proc/diskstats' averages)",
);
pub const LAYERS: FactDef = fact(
    Run,
    "layers",
    Text,
    WhereStorlabNamesIt,
    None,
    "the layers of the target's stack that reads pass through, top to bottom, and the counter of what each was asked",
);
/// A name beginning `layer_not_measured.`: a layer whose counter could not
/// be read during the run, and why.
pub const LAYER_NOT_MEASURED: FactDef = fact(
    Run,
    "layer_not_measured.",
    Text,
    Never,
    None,
    "a layer of the target's stack whose counter could not be read (the layer follows the dot), and why: it is served together with the layer above it",
);

/// Every fact, in the order the reference lists them.
pub const ALL: &[&FactDef] = &[
    &HOSTNAME,
    &CPU_MODEL,
    &CPU_COUNT,
    &MEMORY_BYTES,
    &KERNEL,
    &DISTRIBUTION,
    &STORLAB_VERSION,
    &ROOT,
    &PATH,
    &FS_TYPE,
    &MOUNT_POINT,
    &MOUNT_SOURCE,
    &MOUNT_OPTIONS,
    &SUPER_OPTIONS,
    &BLOCK_DEVICE,
    &SIZE_BYTES,
    &FREE_BYTES,
    &ALLOCATION,
    &IMAGE_SIZE_BYTES,
    &IMAGE_ALLOCATED_BYTES,
    &IMAGE_DIR_FACTS,
    &BRICK_DIR_FACTS,
    &VOLUME_INFO,
    &ZFS_PROPERTIES,
    &EFFECTIVE_OPTIONS,
    &ZFS_FLAVOUR,
    &VERSION,
    &SOFTWARE_VERSION,
    &TELEMETRY_DEVICES,
    &TELEMETRY_PROCESS,
    &BLOCK_TRACE,
    &LAYERS,
    &LAYER_NOT_MEASURED,
];

/// The facts that take a new value with every campaign whatever the kind
/// (beside each kind's own, `crate::targets::TargetEntry::volatile_facts`).
pub fn always_changing() -> impl Iterator<Item = &'static str> {
    ALL.iter()
        .filter(|d| d.changes == Changes::Always)
        .map(|d| d.name)
}
