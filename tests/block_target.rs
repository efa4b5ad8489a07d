//! The `block` target on loop devices the tests create and detach (even
//! when they fail): refused without `allow_destroy`, while mounted, and for
//! workloads that need a filesystem; the io workload runs on the device
//! itself, each job in its own region, and leaves its data there.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{metric, runs, Lab};

/// A loop device over a sparse image in the lab, detached on drop.
pub struct LoopDev {
    pub dev: String,
    pub image: PathBuf,
    mounted: Option<PathBuf>,
}

impl LoopDev {
    pub fn new(lab: &Lab, size: u64) -> LoopDev {
        let image = lab.path().join("block.img");
        let f = std::fs::File::create(&image).unwrap();
        f.set_len(size).unwrap();
        drop(f);
        let out = Command::new("losetup")
            .args(["--find", "--show"])
            .arg(&image)
            .output()
            .unwrap();
        assert!(out.status.success(), "losetup: {out:?}");
        let dev = String::from_utf8(out.stdout).unwrap().trim().to_string();
        LoopDev {
            dev,
            image,
            mounted: None,
        }
    }

    /// Makes an ext4 filesystem on it and mounts it on `dir`.
    fn mount_ext4(&mut self, dir: &Path) {
        let st = Command::new("mkfs.ext4")
            .args(["-q", "-F", &self.dev])
            .status()
            .unwrap();
        assert!(st.success());
        std::fs::create_dir_all(dir).unwrap();
        let st = Command::new("mount")
            .arg(&self.dev)
            .arg(dir)
            .status()
            .unwrap();
        assert!(st.success());
        self.mounted = Some(dir.to_path_buf());
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        if let Some(dir) = &self.mounted {
            let _ = Command::new("umount").arg(dir).status();
        }
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

fn experiment(device: &str, extra: &str, workloads: &str) -> String {
    format!(
        "name = \"raw\"\n[plan]\nrepetitions = 1\ndrop_caches = false\n\
         [[target]]\nname = \"raw\"\nkind = \"block\"\ndevice = \"{device}\"\n{extra}\n{workloads}"
    )
}

const IO: &str = "[[workload]]\nname = \"w\"\nkind = \"io\"\nrw = \"randwrite\"\nsize = \"4M\"\n";

#[test]
fn a_block_target_needs_allow_destroy_and_io_workloads() {
    let lab = Lab::new();
    let file = lab.file("e.toml", &experiment("/dev/loop7", "", IO));
    let out = lab.run(&["check", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("allow_destroy = true"), "{err}");
    let tw = "[[workload]]\nname = \"t\"\nkind = \"tinywrites\"\n";
    let file = lab.file(
        "e.toml",
        &experiment("/dev/loop7", "allow_destroy = true", tw),
    );
    let out = lab.run(&["check", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("only io workloads run on it"), "{err}");
}

#[test]
#[ignore = "needs root"]
fn a_mounted_device_is_refused_before_anything_runs() {
    require_root!();
    let lab = Lab::new();
    let mut dev = LoopDev::new(&lab, 64 << 20);
    dev.mount_ext4(&lab.path().join("mnt"));
    let file = lab.file("e.toml", &experiment(&dev.dev, "allow_destroy = true", IO));
    let out = lab.run(&["run", "--quiet", file.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is mounted on"), "{err}");
    // Untouched: the filesystem is still there and mounted.
    assert!(lab.path().join("mnt/lost+found").exists());
    let root = crate::util::root_device();
    let file = lab.file("e.toml", &experiment(&root, "allow_destroy = true", IO));
    let out = lab.run(&["run", "--quiet", file.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("is mounted on /"));
}

/// The Done-when test: io runs on an unmounted loop device, on the device
/// itself: the blocks it wrote carry verify headers in the image, at each
/// job's own region.
#[test]
#[ignore = "needs root"]
fn io_runs_on_an_unmounted_loop_device() {
    require_root!();
    let lab = Lab::new();
    let dev = LoopDev::new(&lab, 64 << 20);
    let w = "[[workload]]\nname = \"w\"\nkind = \"io\"\nrw = \"randwrite\"\nbs = \"4k\"\n\
             size = \"8M\"\noffset = \"1M\"\nnumjobs = 2\nioengine = \"io_uring\"\niodepth = 8\n\
             direct = true\nverify = \"crc32c\"\nend_fsync = true\n\n\
             [[workload]]\nname = \"r\"\nkind = \"io\"\nrw = \"randread\"\nbssplit = \"4k/50:16k/50\"\n\
             size = \"8M\"\noffset = \"1M\"\nruntime = \"1s\"\nverify = \"crc32c\"\ndirect = true\n";
    let file = lab.file("e.toml", &experiment(&dev.dev, "allow_destroy = true", w));
    let out = lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    assert!(out.contains("2 of 2 planned runs ok"), "{out}");
    let export = lab.export_json();
    assert_eq!(metric(&export, "w", "raw", "bytes"), vec![16.0 * 1048576.0]);
    assert!(metric(&export, "r", "raw", "ops")[0] > 0.0);
    let facts = &export["targets"][0]["facts"]["block_device"];
    assert_eq!(facts["size_bytes"], 64 << 20, "{facts}");
    assert_eq!(facts["logical_block_size"], 512, "{facts}");
    assert!(facts["rotational"].is_boolean(), "{facts}");
    assert!(facts["model"].is_string() && facts["scheduler"].is_string());
    assert!(facts.get("write_cache").is_some(), "{facts}");
    // The image holds job 0's and job 1's regions, stamped with their own
    // offsets; the megabyte before them was never written.
    let image = std::fs::read(&dev.image).unwrap();
    assert!(image[..1 << 20].iter().all(|&b| b == 0));
    for (job, base) in [(0u64, 1u64 << 20), (1, 9 << 20)] {
        for unit in [0u64, 1000, 2047] {
            let off = base + unit * 4096;
            let u = &image[off as usize..off as usize + 4096];
            assert_eq!(&u[0..4], b"STLV", "job {job} unit {unit}");
            assert_eq!(u64::from_le_bytes(u[8..16].try_into().unwrap()), off);
        }
    }
    // Nothing is left: the journal is closed (its scratch directory
    // removed), the claim released.
    let r = &runs(&export)[0];
    assert_eq!(r["status"], "ok");
    let journals = std::fs::read_dir(lab.state_dir()).map_or(0, |d| d.count());
    assert_eq!(journals, 0, "a journal was left");
    let st = Command::new("mkfs.ext4")
        .args(["-q", "-F", &dev.dev])
        .status()
        .unwrap();
    assert!(st.success(), "the device stays claimed after the campaign");
}
