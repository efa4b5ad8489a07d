use super::*;

#[derive(Debug)]
struct Fixed(f64);

impl Source for Fixed {
    fn read(&self) -> Result<Count> {
        Ok(Count {
            bytes: self.0,
            ..Count::default()
        })
    }
    fn describe(&self) -> String {
        format!("{} bytes", self.0)
    }
}

#[test]
fn a_filesystem_without_a_device_is_its_page_cache_alone() {
    let s = Stack::of_chain(&Chain::default());
    assert_eq!(s.levels.len(), 1);
    assert_eq!(s.levels[0].layer, Layer::PageCache);
    assert!(matches!(s.levels[0].asked, Asked::Above));
    assert_eq!(
        s.describe(),
        "page_cache: asked what the layer above passed down"
    );
}

#[test]
fn a_run_counts_what_was_asked_between_its_readings() {
    let b = Count {
        bytes: 100.0,
        requests: Some(3.0),
        parts: vec![(Part::Device("vda".into()), 100.0)],
    };
    let a = Count {
        bytes: 250.0,
        requests: Some(5.0),
        parts: vec![
            (Part::Device("vda".into()), 200.0),
            (Part::Device("vdb".into()), 50.0),
        ],
    };
    let d = a.since(&b).unwrap();
    assert_eq!(d.bytes, 150.0);
    assert_eq!(d.requests, Some(2.0));
    assert_eq!(
        d.parts,
        [
            (Part::Device("vda".into()), 100.0),
            (Part::Device("vdb".into()), 50.0)
        ]
    );
    assert!(b.since(&a).unwrap_err().contains("went back"));
}

#[test]
fn a_stack_reads_every_counter_and_says_why_one_is_unknown() {
    let stack = Arc::new(Stack::of_chain(&Chain::default()).then([
        Level::counted(Layer::GlusterClient, Fixed(5.0)),
        Level::unknown(Layer::BrickPageCache, "bricks on another host"),
    ]));
    let r = stack.begin().end();
    assert_eq!(r.before.len(), 3);
    assert_eq!(r.after[1].as_ref().unwrap().bytes, 5.0);
    assert_eq!(r.after[2], Err("bricks on another host".to_string()));
    assert!(stack
        .describe()
        .contains("brick_page_cache: not measured: bricks on another host"));
}

#[derive(Debug)]
struct Slow;

impl Source for Slow {
    fn read(&self) -> Result<Count> {
        Ok(Count::default())
    }
    fn describe(&self) -> String {
        "a command through a daemon".into()
    }
    fn slow(&self) -> Option<String> {
        Some("it takes 100 ms".into())
    }
}

/// Between a matrix cell's tests a slow counter is not read, and says why;
/// the others are read as before.
#[test]
fn between_tests_only_the_fast_counters_are_read() {
    let stack = Stack::of_chain(&Chain::default()).then([
        Level::counted(Layer::GlusterClient, Slow),
        Level::counted(Layer::Device, Fixed(7.0)),
    ]);
    let between = stack.between_tests().snapshot();
    assert_eq!(
        between[1],
        Err("not read between a cell's tests: it takes 100 ms".to_string())
    );
    assert_eq!(between[2].as_ref().unwrap().bytes, 7.0);
    assert!(stack.snapshot()[1].is_ok(), "the whole run reads it");
}

#[test]
fn the_work_tree_has_its_page_cache_over_its_devices() {
    let chain = Chain::of_paths(&[std::env::current_dir().unwrap()]);
    let s = Stack::of_chain(&chain);
    if chain.is_empty() {
        return; // a work tree on tmpfs or overlay: no device to read
    }
    assert_eq!(s.levels.last().unwrap().layer, Layer::Device);
    // diskstats of the bottom devices can be read, and never go back.
    let r = Arc::new(s).begin().end();
    let (b, a) = (r.before.last().unwrap(), r.after.last().unwrap());
    assert!(a.as_ref().unwrap().since(b.as_ref().unwrap()).is_ok());
}
