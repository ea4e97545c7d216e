//! The objects of a folder of manifests: every file's from its last good version.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use super::ManifestError;
use super::limits::{MAX_MANIFEST_BYTES, file_too_large};
use super::parse::{ReadObject, read_objects};
use super::walk::{list_manifests, special_kind};
use crate::{Object, Snapshot};

/// The manifest files of a folder and the objects each defined in its last good version.
#[derive(Debug)]
pub(crate) struct Folder {
    root: PathBuf,
    files: BTreeMap<PathBuf, File>,
    /// The entries the last listing skipped, with why: each is reported when it first appears.
    skipped: BTreeSet<(PathBuf, String)>,
}

/// What a reload found wrong.
#[derive(Debug, Default)]
pub(crate) struct Reload {
    /// The errors of the files that changed: their last good objects stay.
    pub(crate) errors: Vec<ManifestError>,
    /// The errors of the invalid objects of the files that changed: each is left out.
    pub(crate) invalid: Vec<ManifestError>,
    /// The entries skipped that the previous reload did not skip (special files, symlink
    /// loops, folders too deep or unreadable).
    pub(crate) skipped: Vec<ManifestError>,
}

#[derive(Debug)]
struct File {
    /// A hash of the content last read, good or bad: unchanged files are not parsed again.
    fingerprint: u64,
    /// The objects of the last version that parsed: its valid objects, and for each invalid
    /// one, the object of the same kind and key of the version before, if there was one.
    objects: Vec<Object>,
    /// Whether the content last read was rejected.
    rejected: bool,
    /// How many objects of the last version that parsed were invalid, so left out.
    invalid: usize,
}

impl File {
    /// The file with content `text`, parsed unless it is the content of `previous`; a rejected
    /// version keeps the objects of `previous` and adds its error to `errors`. Each invalid
    /// object is left out, its errors added to `invalid`, and the object of the same kind and
    /// key in `previous` kept in its place, as the API server would have kept it.
    fn read(
        path: &Path,
        text: &str,
        previous: Option<File>,
        errors: &mut Vec<ManifestError>,
        invalid: &mut Vec<ManifestError>,
    ) -> Self {
        let fingerprint = fingerprint(text);
        match previous {
            Some(file) if file.fingerprint == fingerprint => file,
            previous => match read_objects(path, text) {
                Ok(read) => File::parsed(path, fingerprint, read, previous.as_ref(), invalid),
                Err(error) => {
                    errors.push(error);
                    File::rejected(fingerprint, previous)
                }
            },
        }
    }

    /// A version that parsed, of objects `read`: the valid ones, and for each invalid one the
    /// object of the same kind and key in `previous` if it had one; the errors of the invalid
    /// ones are added to `invalid`.
    fn parsed(
        path: &Path,
        fingerprint: u64,
        read: Vec<ReadObject>,
        previous: Option<&File>,
        invalid: &mut Vec<ManifestError>,
    ) -> Self {
        let mut old_objects = BTreeMap::new();
        if read.iter().any(|object| object.invalid.is_some()) {
            for old in previous.iter().flat_map(|file| &file.objects) {
                old_objects.insert((old.kind(), old.key()), old);
            }
        }
        let mut objects = Vec::with_capacity(read.len());
        let mut left_out = 0;
        for read in read {
            if read.invalid.is_none() {
                objects.push(read.object);
                continue;
            }
            left_out += 1;
            let old = old_objects.get(&(read.object.kind(), read.object.key()));
            let outcome = if old.is_some() {
                "is left out: its previous version stays"
            } else {
                "is left out"
            };
            invalid.extend(read.errors(path, outcome));
            objects.extend(old.map(|old| Object::clone(old)));
        }
        File {
            fingerprint,
            objects,
            rejected: false,
            invalid: left_out,
        }
    }

    /// A rejected version, with the objects of `previous` (and its count of invalid ones).
    fn rejected(fingerprint: u64, previous: Option<File>) -> Self {
        let (objects, invalid) =
            previous.map_or_else(Default::default, |file| (file.objects, file.invalid));
        File {
            fingerprint,
            objects,
            rejected: true,
            invalid,
        }
    }
}

impl Folder {
    /// A folder not read yet.
    pub(crate) fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            files: BTreeMap::new(),
            skipped: BTreeSet::new(),
        }
    }

    /// Reads the folder again: parses new and changed files, forgets deleted ones (and those
    /// that are no longer regular files). Returns the errors of the files that changed since
    /// the last reload (a bad file keeps the objects of its last good version), those of their
    /// invalid objects (left out), and the entries newly skipped.
    pub(crate) fn reload(&mut self) -> Reload {
        let mut errors = Vec::new();
        let mut invalid = Vec::new();
        let listing = match list_manifests(&self.root) {
            Ok(listing) => listing,
            Err(error) => {
                // The folder itself is gone or unreadable: keep everything until it is back.
                let message = format!("cannot list the manifest folder: {error}");
                errors.push(ManifestError::file(&self.root, message));
                return Reload {
                    errors,
                    ..Reload::default()
                };
            }
        };
        let skipped: BTreeSet<_> = listing.skipped.into_iter().collect();
        let new_skips = skipped.difference(&self.skipped);
        let new_skips = new_skips.map(|(path, why)| ManifestError::file(path, why.as_str()));
        let new_skips = new_skips.collect();
        self.skipped = skipped;
        let mut files = BTreeMap::new();
        for path in listing.files {
            let previous = self.files.remove(&path);
            let file = match read_manifest(&path) {
                Ok(None) => continue, // deleted since it was listed
                Ok(Some(text)) => File::read(&path, &text, previous, &mut errors, &mut invalid),
                // Unreadable (a permission change): keep its last good objects.
                Err(error) => {
                    errors.push(error);
                    File::rejected(0, previous)
                }
            };
            files.insert(path, file);
        }
        self.files = files;
        Reload {
            errors,
            invalid,
            skipped: new_skips,
        }
    }

    /// How many files are rejected now (their last good objects are used).
    pub(crate) fn rejected_files(&self) -> usize {
        self.files.values().filter(|file| file.rejected).count()
    }

    /// How many objects are left out now because they are invalid.
    pub(crate) fn invalid_objects(&self) -> usize {
        self.files.values().map(|file| file.invalid).sum()
    }

    /// Every object, the first definition in path order winning; the errors name the files
    /// whose definitions lost.
    pub(crate) fn snapshot(&self) -> (Snapshot, Vec<ManifestError>) {
        let mut snapshot = Snapshot::default();
        let mut origins: BTreeMap<_, &Path> = BTreeMap::new();
        let mut errors = Vec::new();
        for (path, file) in &self.files {
            for object in &file.objects {
                let key = (object.kind(), object.key());
                if let Some(first) = origins.get(&key) {
                    let message = format!(
                        "{} {} is also defined in {}, which wins (files are read in path order)",
                        key.0,
                        key.1,
                        first.display()
                    );
                    errors.push(ManifestError::file(path, message));
                    continue;
                }
                origins.insert(key, path);
                snapshot.insert(object.clone());
            }
        }
        (snapshot, errors)
    }
}

/// The text of a manifest file; `None` if it no longer exists. Its metadata is checked again
/// just before it is opened, as the listing's may be stale: a file replaced meanwhile by a FIFO
/// or a device is refused unopened, and one over the size limit unread. A special file swapped
/// in between that check and the open cannot block us either: the open does not wait (no
/// `O_NONBLOCK` wait for a FIFO's writer, no terminal taken as ours), and the opened file is
/// checked again before a byte is read.
fn read_manifest(path: &Path) -> Result<Option<String>, ManifestError> {
    let cannot = |error: io::Error| ManifestError::file(path, format!("cannot read: {error}"));
    let not_regular = |metadata: &fs::Metadata, skipped: &str| {
        let kind = special_kind(metadata.file_type());
        let message = format!("became {kind}, not a regular file: skipped {skipped}");
        ManifestError::file(path, message)
    };
    let metadata = match fs::metadata(path) {
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        metadata => metadata.map_err(cannot)?,
    };
    if !metadata.is_file() {
        return Err(not_regular(&metadata, "unopened"));
    }
    if metadata.len() > MAX_MANIFEST_BYTES {
        return Err(ManifestError::file(path, file_too_large(metadata.len())));
    }
    let file = match open_without_waiting(path) {
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        file => file.map_err(cannot)?,
    };
    let opened = file.metadata().map_err(cannot)?;
    if !opened.is_file() {
        return Err(not_regular(&opened, "unread"));
    }
    // The file may grow after the check: read no more than the limit allows.
    let mut bytes = Vec::new();
    file.take(MAX_MANIFEST_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    let read = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if read > MAX_MANIFEST_BYTES {
        return Err(ManifestError::file(path, file_too_large(read)));
    }
    String::from_utf8(bytes).map(Some).map_err(|error| {
        let message = format!("not UTF-8 (byte {})", error.utf8_error().valid_up_to());
        ManifestError::file(path, message)
    })
}

/// Opens `path` for reading with `O_NONBLOCK` (a FIFO without a writer opens at once instead
/// of waiting for one) and `O_NOCTTY`.
fn open_without_waiting(path: &Path) -> io::Result<fs::File> {
    use rustix::fs::{Mode, OFlags, open};
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    let fd = open(path, flags, Mode::empty()).map_err(io::Error::from)?;
    Ok(fs::File::from(fd))
}

fn fingerprint(text: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    const MAP: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n";

    #[test]
    fn special_entries_are_reported_once_and_the_files_still_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        fs::write(root.join("a.yaml"), MAP).unwrap();
        symlink("/dev/zero", root.join("zero.yaml")).unwrap();
        symlink(".", root.join("loop")).unwrap();
        let mut folder = Folder::new(&root);
        let first = folder.reload();
        assert!(first.errors.is_empty(), "{:?}", first.errors);
        assert_eq!(first.skipped.len(), 2, "{:?}", first.skipped);
        assert_eq!(folder.snapshot().0.config_maps.len(), 1);
        let again = folder.reload();
        assert!(
            again.skipped.is_empty(),
            "reported when they first appear only"
        );
        // Once gone and back, they are reported again.
        fs::remove_file(root.join("zero.yaml")).unwrap();
        assert!(folder.reload().skipped.is_empty());
        symlink("/dev/zero", root.join("zero.yaml")).unwrap();
        assert_eq!(folder.reload().skipped.len(), 1);
    }

    #[test]
    fn a_fifo_opens_without_waiting_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("x.yaml");
        use rustix::fs::{CWD, FileType, Mode, mknodat};
        mknodat(CWD, &fifo, FileType::Fifo, Mode::RUSR, 0).unwrap();
        // The open runs on a thread, so that a regression fails the test instead of hanging it.
        let (sender, opened) = std::sync::mpsc::channel();
        let path = fifo.clone();
        std::thread::spawn(move || {
            let kind = open_without_waiting(&path).and_then(|file| file.metadata());
            let kind = kind.map(|metadata| special_kind(metadata.file_type()));
            sender.send(kind.map_err(|error| error.to_string())).ok();
        });
        let kind = opened
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("the open waited for a writer");
        assert_eq!(kind.unwrap(), "a FIFO (named pipe)");
    }

    #[test]
    fn an_oversized_file_is_refused_unread_with_the_limit_named() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let big = fs::File::create(root.join("big.yaml")).unwrap();
        big.set_len(MAX_MANIFEST_BYTES + 1).unwrap();
        let mut folder = Folder::new(&root);
        let reload = folder.reload();
        let messages: Vec<_> = reload.errors.iter().map(ToString::to_string).collect();
        let expected = format!(
            "{}: 16777217 bytes, over the limit of 16777216 bytes (16 MiB) for one manifest \
             file: split it into several files",
            root.join("big.yaml").display()
        );
        assert_eq!(messages, [expected]);
        assert_eq!(folder.rejected_files(), 1);
    }
}
