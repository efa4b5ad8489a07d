//! Renderers of the [`super::document::Document`]: the terminal (its
//! summary and warnings), Markdown and HTML (its body, through the one
//! layout of [`markup`]). They lay the document out and add nothing.

pub mod html;
pub mod markdown;
pub mod markup;
pub mod terminal;

#[cfg(test)]
mod tests {
    use super::html::Html;
    use super::markdown::Markdown;
    use super::markup::render;
    use crate::report::document::{Chart, Document, Section};
    use crate::report::svg::{target_color, Bar, BarChart};

    fn doc() -> Document {
        let mut intro = Section::untitled(1);
        intro.text("what ran");
        let mut part = Section::new(2, "w (io)").with_class("headline");
        part.chart(Chart::Bar(BarChart {
            title: "w: bw".into(),
            y_label: "MiB/s".into(),
            bars: vec![Bar {
                label: "a".into(),
                value: 1.0,
                ci: None,
                color: target_color(0),
                runs: Vec::new(),
            }],
        }))
        .list(vec!["one".into()]);
        Document {
            title: "c — campaign 1".into(),
            summary: Vec::new(),
            body: vec![intro, part],
            warnings: Vec::new(),
        }
    }

    #[test]
    fn both_formats_lay_out_the_same_outline() {
        let md = render(&Markdown, &doc()).unwrap();
        assert_eq!(md, "# c — campaign 1\n\nwhat ran\n\n## w (io)\n\n- one\n\n");
        let html = render(&Html, &doc()).unwrap();
        let body = &html[html.find("<body>").unwrap()..];
        let order = [
            "<h1>c — campaign 1</h1>",
            "<p>what ran</p>",
            "<div class=\"headline\"><h2 id=\"s-w-io\">w (io)</h2>",
            "<div class=\"chart\"><svg",
            "<ul><li>one</li></ul>\n</div>",
        ];
        let mut at = 0;
        for part in order {
            let found = body[at..]
                .find(part)
                .unwrap_or_else(|| panic!("{part} in {body}"));
            at += found + part.len();
        }
    }
}
