//! The listing of a manifest folder: which entries are manifest files to read, and which are
//! skipped and why, without opening anything.
//!
//! Only regular files are read: a FIFO named `x.yaml` would block the reader until a writer
//! comes, a device such as `/dev/zero` never ends, and a socket cannot be opened; they are
//! reported from their metadata (through symlinks too) and never opened. Symlinks are
//! followed, but every folder is read once per listing: folders are known by their device and
//! inode, so a link back to a folder above it (`ln -s . loop`) is reported as a loop and not
//! descended, and a second way to a folder already read is not read again. The listing
//! therefore costs at most one visit per folder, however many links point around.

use std::collections::HashMap;
use std::fs::{self, FileType};
use std::io;
use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _};
use std::path::{Path, PathBuf};

/// Folders nested deeper than this below the root are not read.
pub(super) const MAX_DEPTH: usize = 16;

/// A folder's identity: its device and inode.
type Identity = (u64, u64);

/// What the listing of a folder found.
#[derive(Debug, Default)]
pub(super) struct Listing {
    /// The manifest files (regular files with a manifest extension), in listing order.
    pub(super) files: Vec<PathBuf>,
    /// The entries not read, each with why (one line, for a warning).
    pub(super) skipped: Vec<(PathBuf, String)>,
}

/// Lists the `*.yaml`, `*.yml` and `*.json` files under `root`, skipping hidden entries
/// (`.status`, and a ConfigMap volume's `..data` and `..2024_…` folders, whose files are also
/// reachable through the visible symlinks). Fails only when `root` itself cannot be read.
pub(super) fn list_manifests(root: &Path) -> io::Result<Listing> {
    let identity = id(&fs::metadata(root)?);
    let mut walk = Walk {
        listing: Listing::default(),
        visited: HashMap::from([(identity, root.to_owned())]),
        ancestors: vec![identity],
    };
    walk.folder(root)?;
    Ok(walk.listing)
}

struct Walk {
    listing: Listing,
    /// Every folder read in this listing, by identity, with the path it was read as.
    visited: HashMap<Identity, PathBuf>,
    /// The folders from the root down to the one being read.
    ancestors: Vec<Identity>,
}

impl Walk {
    fn folder(&mut self, dir: &Path) -> io::Result<()> {
        for entry in fs::read_dir(dir)? {
            let entry = entry?;
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let path = entry.path();
            // The entry itself, and what it is when symlinks are followed; an entry that
            // vanished meanwhile, or a dangling link, is simply not there.
            let (Ok(own_type), Ok(metadata)) = (entry.file_type(), fs::metadata(&path)) else {
                continue;
            };
            let through = if own_type.is_symlink() {
                "a symlink to "
            } else {
                ""
            };
            if metadata.is_dir() {
                self.subfolder(path, id(&metadata), through);
            } else if is_manifest(&path) {
                if metadata.is_file() {
                    self.listing.files.push(path);
                } else {
                    let kind = special_kind(metadata.file_type());
                    let why = format!("{through}{kind}, not a regular file: skipped unopened");
                    self.listing.skipped.push((path, why));
                }
            }
        }
        Ok(())
    }

    fn subfolder(&mut self, path: PathBuf, identity: Identity, through: &str) {
        if self.ancestors.contains(&identity) {
            let target = self.visited.get(&identity).map(|p| p.display().to_string());
            let why = format!(
                "{through}a folder above it ({}): a loop, not followed",
                target.unwrap_or_default()
            );
            self.listing.skipped.push((path, why));
        } else if let Some(first) = self.visited.get(&identity) {
            let why = format!("{through}{}, read there already", first.display());
            self.listing.skipped.push((path, why));
        } else if self.ancestors.len() > MAX_DEPTH {
            let why = format!("deeper than {MAX_DEPTH} folders below the manifest folder");
            self.listing.skipped.push((path, why));
        } else {
            self.visited.insert(identity, path.clone());
            self.ancestors.push(identity);
            // A subfolder that vanished or cannot be read hides only its own files.
            if let Err(error) = self.folder(&path) {
                let why = format!("cannot list this folder: {error}");
                self.listing.skipped.push((path, why));
            }
            self.ancestors.pop();
        }
    }
}

fn id(metadata: &fs::Metadata) -> Identity {
    (metadata.dev(), metadata.ino())
}

/// What a file that is not a regular file is, in words.
pub(super) fn special_kind(file_type: FileType) -> &'static str {
    if file_type.is_fifo() {
        "a FIFO (named pipe)"
    } else if file_type.is_socket() {
        "a socket"
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_block_device() {
        "a block device"
    } else {
        "not a regular file"
    }
}

fn is_manifest(path: &Path) -> bool {
    path.extension()
        .and_then(|extension| extension.to_str())
        .is_some_and(|extension| matches!(extension, "yaml" | "yml" | "json"))
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;
    use std::os::unix::net::UnixListener;

    use super::*;

    fn names(root: &Path, paths: impl IntoIterator<Item = PathBuf>) -> Vec<String> {
        let mut names: Vec<_> = paths
            .into_iter()
            .map(|p| p.strip_prefix(root).unwrap().display().to_string())
            .collect();
        names.sort();
        names
    }

    fn mkfifo(path: &Path) {
        let made = std::process::Command::new("mkfifo").arg(path).status();
        assert!(made.unwrap().success());
    }

    #[test]
    fn only_regular_files_are_listed_and_the_others_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        fs::write(root.join("a.yaml"), "").unwrap();
        mkfifo(&root.join("fifo.yaml"));
        let _socket = UnixListener::bind(root.join("socket.json")).unwrap();
        symlink("/dev/null", root.join("null.yml")).unwrap();
        symlink("/dev/zero", root.join("zero.yaml")).unwrap();
        mkfifo(&root.join("fifo.txt")); // not a manifest's name: none of our business
        symlink("fifo.yaml", root.join("to-fifo.yaml")).unwrap();

        let listing = list_manifests(&root).unwrap();
        assert_eq!(names(&root, listing.files), ["a.yaml"]);
        let mut skipped: Vec<_> = listing
            .skipped
            .iter()
            .map(|(path, why)| format!("{}: {why}", path.strip_prefix(&root).unwrap().display()))
            .collect();
        skipped.sort();
        assert_eq!(
            skipped,
            [
                "fifo.yaml: a FIFO (named pipe), not a regular file: skipped unopened",
                "null.yml: a symlink to a character device, not a regular file: skipped unopened",
                "socket.json: a socket, not a regular file: skipped unopened",
                "to-fifo.yaml: a symlink to a FIFO (named pipe), not a regular file: skipped \
                 unopened",
                "zero.yaml: a symlink to a character device, not a regular file: skipped unopened",
            ]
        );
    }

    #[test]
    fn symlink_loops_are_reported_once_each_and_not_followed() {
        for links in 1..=3 {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path().canonicalize().unwrap();
            fs::create_dir(root.join("sub")).unwrap();
            fs::write(root.join("sub/a.yaml"), "").unwrap();
            for link in 0..links {
                symlink(".", root.join(format!("loop{link}"))).unwrap();
                symlink("..", root.join(format!("sub/up{link}"))).unwrap();
            }
            let listing = list_manifests(&root).unwrap();
            assert_eq!(names(&root, listing.files), ["sub/a.yaml"]);
            assert_eq!(listing.skipped.len(), 2 * links, "{:?}", listing.skipped);
            let (path, why) = &listing.skipped[0];
            assert!(path.starts_with(&root));
            let expected = format!(
                "a symlink to a folder above it ({}): a loop",
                root.display()
            );
            assert!(why.starts_with(&expected), "{why}");
        }
    }

    #[test]
    fn a_folder_reached_twice_is_read_once() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        fs::create_dir(root.join("a")).unwrap();
        fs::write(root.join("a/x.yaml"), "").unwrap();
        symlink("a", root.join("b")).unwrap();
        let listing = list_manifests(&root).unwrap();
        assert_eq!(listing.files.len(), 1);
        assert_eq!(listing.skipped.len(), 1);
    }

    #[test]
    fn depth_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let mut deep = root.clone();
        for level in 0..=MAX_DEPTH {
            deep.push(format!("d{level}"));
        }
        fs::create_dir_all(&deep).unwrap();
        fs::write(deep.join("x.yaml"), "").unwrap();
        let listing = list_manifests(&root).unwrap();
        assert!(listing.files.is_empty());
        assert_eq!(listing.skipped.len(), 1);
        assert!(listing.skipped[0].1.starts_with("deeper than 16"));
    }
}
