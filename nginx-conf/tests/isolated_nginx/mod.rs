//! Runs the real `nginx -t` on one configuration file without touching the host, for the live
//! differential tests.
//!
//! `nginx -t` is not a pure parser: it opens the log files, creates the temp directories and the
//! pid file, and binds every `listen` address. So the check runs in fresh mount and network
//! namespaces (`unshare(1)`, which needs root): empty tmpfs mounts hide the writable locations
//! compiled into Debian's nginx (`/run`, `/var/lib/nginx`, `/var/log/nginx`, `/var/cache/nginx`),
//! the prefix is a scratch folder on that tmpfs, and the new network namespace has its loopback
//! up and non-local binds allowed, so any `listen` address binds without taking a real port.
//!
//! `-c` does not read Debian's `modules-enabled`, so when the Lua module is installed
//! (`libnginx-mod-http-lua`) it is loaded with `load_module` through `-g`, NDK first: then
//! nginx lexes `*_by_lua_block` bodies with the Lua module's own scanner, which the crate
//! mirrors. `-e stderr` (nginx 1.19.5 and later) sends start-up errors to stderr.
//!
//! Where the behaviour comes from: nginx's `-t`, `-q`, `-p`, `-c`, `-e` and `-g` options
//! (nginx.org, "Command-line parameters"), `load_module` (ngx_core_module), and util-linux's
//! `unshare(1)`.
#![allow(clippy::std_instead_of_alloc, clippy::std_instead_of_core)] // tests use std freely

use std::path::Path;
use std::process::{Command, Output};
use std::sync::OnceLock;

/// Where Debian installs nginx's dynamic modules.
const MODULES: &str = "/usr/lib/nginx/modules";

/// The folders nginx writes to by default; each is covered by an empty tmpfs during the check.
const MASKED: [&str; 4] = [
    "/run",
    "/var/lib/nginx",
    "/var/log/nginx",
    "/var/cache/nginx",
];

/// nginx's prefix during the check: a scratch folder on the tmpfs that covers `/run`.
const SCRATCH: &str = "/run/nginx-check/";

/// Runs inside the new namespaces with the arguments `SCRATCH MASKED... -- NGINX-COMMAND...`:
/// mask the folders, create the scratch prefix, prepare the network, then run nginx.
/// Exit status 3 means the setup itself failed (nginx exits with 0 or 1).
const INSIDE: &str = r#"
scratch=$1; shift
while [ "$1" != -- ]; do
    if [ -d "$1" ]; then mount -t tmpfs -o mode=0755 tmpfs "$1" || exit 3; fi
    shift
done
shift
mkdir -p "$scratch" || exit 3
ip link set lo up 2>/dev/null
echo 1 > /proc/sys/net/ipv4/ip_nonlocal_bind
echo 1 > /proc/sys/net/ipv6/ip_nonlocal_bind 2>/dev/null
exec "$@"
"#;

/// The `-g` directives for this machine (empty without the Lua module), or `None` when nginx
/// cannot run here: not installed, or no right to create namespaces (not root).
fn setup() -> Option<&'static str> {
    static SETUP: OnceLock<Option<String>> = OnceLock::new();
    SETUP
        .get_or_init(|| {
            let runs = |program: &str, args: &[&str]| {
                Command::new(program)
                    .args(args)
                    .output()
                    .is_ok_and(|o| o.status.success())
            };
            let usable = runs("nginx", &["-v"]) && runs("unshare", &["--mount", "--net", "true"]);
            usable.then(module_directives)
        })
        .as_deref()
}

/// `load_module` directives for NDK and the Lua module, when they are installed.
fn module_directives() -> String {
    let lua = format!("{MODULES}/ngx_http_lua_module.so");
    if !Path::new(&lua).is_file() {
        eprintln!(
            "note: {lua} is missing, so nginx will not know *_by_lua_block \
             (apt-get install libnginx-mod-http-lua)"
        );
        return String::new();
    }
    let ndk = format!("{MODULES}/ndk_http_module.so");
    if Path::new(&ndk).is_file() {
        format!("load_module {ndk}; load_module {lua};")
    } else {
        format!("load_module {lua};")
    }
}

/// Runs `nginx -t -q` on `config` in isolation and returns what it printed and its status, or
/// `None` when nginx cannot run here.
pub(crate) fn check(config: &Path) -> Option<Output> {
    let modules = setup()?;
    assert!(
        !MASKED.iter().any(|d| config.starts_with(d)),
        "{} is hidden during the check: keep test configs out of {MASKED:?}",
        config.display()
    );
    let mut command = Command::new("unshare");
    command
        .args(["--mount", "--net", "--propagation", "private"])
        .args(["sh", "-c", INSIDE, "isolated-nginx", SCRATCH])
        .args(MASKED)
        .args([
            "--", "nginx", "-t", "-q", "-p", SCRATCH, "-e", "stderr", "-c",
        ])
        .arg(config);
    if !modules.is_empty() {
        command.args(["-g", modules]);
    }
    let output = command.output().ok()?;
    if output.status.code() == Some(3) {
        eprintln!(
            "cannot prepare the namespaces for nginx -t: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        return None;
    }
    Some(output)
}
