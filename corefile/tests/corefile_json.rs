//! The `corefile-json` example's view with files and an environment, as CoreDNS reads them:
//! `import` relative to the Corefile, `{$NAME}` from the environment, a directory import
//! refused in CoreDNS's words, and the server blocks listed when the overlap stage fails
//! (`docs/corefile.md` §8).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../examples/support/view_json.rs"]
#[allow(dead_code)]
mod view_json;

use std::path::{Path, PathBuf};

/// A fresh directory for one test, removed on drop.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("corefile-json-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn view(path: &Path, env: &[(&str, &str)]) -> String {
    let input = std::fs::read(path).unwrap();
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    let lookup = |name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let context = view_json::Context {
        env: &lookup,
        resolver: &mut corefile::fs::FsResolver,
    };
    let (json, _) = view_json::view_json(&input, path.to_str().unwrap(), false, context);
    json.to_pretty()
}

#[test]
fn imports_are_read_relative_to_the_corefile_and_variables_substituted() {
    let dir = Dir::new("import");
    dir.write("snippets/cache.conf", "cache 30\n");
    let corefile = dir.write(
        "Corefile",
        "{$ZONE}:53 {\n    import snippets/*.conf\n    whoami\n}\n",
    );
    let json = view(&corefile, &[("ZONE", "example.org")]);
    assert!(json.contains("\"ok\": true"), "{json}");
    assert!(json.contains("\"dns://example.org.:53\""), "{json}");
    assert!(json.contains("\"name\": \"cache\""), "{json}");
    assert!(json.contains("snippets/cache.conf"), "{json}");
}

#[test]
fn a_directory_import_is_refused_in_coredns_words() {
    let dir = Dir::new("directory");
    std::fs::create_dir_all(dir.0.join("sub")).unwrap();
    let corefile = dir.write("Corefile", ".:53 {\n    import sub\n}\n");
    let json = view(&corefile, &[]);
    assert!(json.contains("\"stage\": \"parse\""), "{json}");
    assert!(
        json.contains(":2 - Error during parsing: Could not import "),
        "{json}"
    );
    assert!(json.contains("sub: is a directory"), "{json}");
}

#[test]
fn the_overlap_stage_still_lists_the_server_blocks() {
    let dir = Dir::new("overlap");
    let corefile = dir.write(
        "Corefile",
        "example.org {\n    whoami\n}\nexample.org {\n    log\n}\n",
    );
    let json = view(&corefile, &[]);
    assert!(json.contains("\"stage\": \"overlap\""), "{json}");
    assert_eq!(json.matches("\"raw_keys\"").count(), 2, "{json}");
}
