use super::*;

#[test]
fn every_kind_has_exactly_one_row_and_names_are_unique() {
    use TargetKind::*;
    let kinds = [Dir, Tmpfs, Loop, Zfs, Gluster, Nfs, Block, VmDisk];
    for k in kinds {
        assert_eq!(TARGETS.iter().filter(|e| e.kind == k).count(), 1, "{k:?}");
        assert_eq!(TargetKind::parse(k.name()), Some(k));
    }
    assert_eq!(TARGETS.len(), kinds.len());
    let mut names = TargetKind::names();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), TARGETS.len());
}

#[test]
fn every_declared_default_is_read_into_its_typed_field() {
    fn reads<K: Declared>() {
        let p = Params::defaults(K::PARAMS);
        let declared = K::PARAMS.iter().filter(|s| s.default.is_some()).count();
        assert_eq!(p.to_json().as_object().unwrap().len(), declared);
        if let Err(e) = K::from_params(&p) {
            panic!("{}: {e:?}", std::any::type_name::<K>());
        }
    }
    reads::<dir::DirParams>();
    reads::<tmpfs::TmpfsParams>();
    reads::<loopfs::LoopParams>();
    reads::<vmdisk::VmDiskParams>();
    reads::<zfs::ZfsParams>();
    reads::<gluster::GlusterParams>();
    reads::<nfs::NfsParams>();
    reads::<block::BlockParams>();
}

#[test]
fn only_mounted_kinds_remount() {
    assert!(TargetKind::Dir.can_remount().is_err());
    assert!(TargetKind::Tmpfs.can_remount().is_err());
    assert!(TargetKind::Block.can_remount().is_err());
    assert!(TargetKind::Loop.can_remount().is_ok());
}

#[test]
fn a_variant_is_checked_anew() {
    let mut p = Params::defaults(TargetKind::Loop.params());
    p.set("size", crate::params::Value::Size(200 << 20));
    assert!(TargetKind::Loop.configure(&p).is_ok());
    p.set("fs", crate::params::Value::Str("xfs".into()));
    assert_eq!(TargetKind::Loop.configure(&p).unwrap_err().0, "size");
}

#[test]
fn volatile_facts_are_named_by_kind_and_free_space_by_every_kind() {
    use super::TargetKind::*;
    for k in TargetKind::all() {
        assert!(k.volatile_fact("free_bytes"), "{k:?}");
        assert!(k.volatile_fact("image_dir_facts.free_bytes"), "{k:?}");
        assert!(!k.volatile_fact("fs_type"), "{k:?}");
    }
    // A directory the user named is theirs: where it is mounted counts.
    assert!(!Dir.volatile_fact("mount_point"));
    assert!(Loop.volatile_fact("mount_point") && Loop.volatile_fact("block_device.name"));
    assert!(!Loop.volatile_fact("block_device.model"));
    assert!(Gluster.volatile_fact("volume_info.Brick2"));
    assert!(Gluster.volatile_fact("volume_info.Volume ID"));
    assert!(!Gluster.volatile_fact("volume_info.Type"));
    assert!(
        !Gluster.volatile_fact("volumes"),
        "a name covers what lies under it, no more"
    );
}

#[test]
fn every_resource_only_a_kind_knows_is_undone_by_a_kind() {
    let dir = tempfile::Builder::new()
        .prefix("storlab-4000000001-t")
        .tempdir()
        .unwrap();
    let gone = dir.path().join("gone.pid");
    use crate::provision::journal::Resource;
    for r in [
        Resource::Pool {
            name: "storlab_4000000001_t".into(),
        },
        Resource::Volume {
            name: "storlab-4000000001-t".into(),
        },
        Resource::Peer {
            name: "storlab-no-such-peer".into(),
        },
        Resource::QemuDaemon {
            pidfile: gone.clone(),
            export: dir.path().join("export"),
        },
        Resource::Ganesha { pidfile: gone },
    ] {
        // Reaching ZFS or glusterd may fail here; no kind owning it must not.
        if let Err(e) = r.undo(RESOURCES) {
            assert!(!format!("{e:#}").contains("no target kind"), "{e:#}");
        }
        let none = r.undo(Kinds::NONE).unwrap_err();
        assert!(
            format!("{none:#}").contains("no target kind undoes"),
            "{none:#}"
        );
    }
}
