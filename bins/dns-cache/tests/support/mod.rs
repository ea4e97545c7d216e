//! Starts `dns-cache` (and Debian's `unbound` as an upstream) on 127.0.0.1 with free
//! ports, queries them, and kills every child on drop, so a failing test leaves nothing
//! behind.

// Each test binary uses part of this module.
#![allow(dead_code)]

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dns_wire::{Class, Message, Name, OwnedEdns, OwnedMessage, OwnedQuestion, Type};

/// Generous bound for liveness waits.
pub(crate) const PATIENCE: Duration = Duration::from_secs(20);

/// Whether `command` is on the PATH (or in /usr/sbin); prints `skipped: ...` if not.
pub(crate) fn have(command: &str) -> bool {
    let found = Command::new("sh")
        .args([
            "-c",
            &format!("command -v {command} || test -x /usr/sbin/{command}"),
        ])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        println!("skipped: {command} is not installed");
    }
    found
}

/// Whether python3 can import dnspython.
pub(crate) fn have_dnspython() -> bool {
    let found = Command::new("python3")
        .args(["-c", "import dns.message"])
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        println!("skipped: python3 with dnspython is not installed");
    }
    found
}

/// A port free for both UDP and TCP on 127.0.0.1.
pub(crate) fn free_port() -> u16 {
    loop {
        let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
        let port = udp.local_addr().unwrap().port();
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// A query for `name`/`qtype` with `id`, RD set, and EDNS (size, DO) if given.
pub(crate) fn query(name: &str, qtype: Type, edns: Option<(u16, bool)>, id: u16) -> Vec<u8> {
    let mut msg = OwnedMessage::default();
    msg.header.id = id;
    msg.header.rd = true;
    msg.questions.push(OwnedQuestion {
        name: name.parse::<Name>().unwrap(),
        qtype,
        qclass: Class::IN,
    });
    msg.edns = edns.map(|(size, dnssec_ok)| OwnedEdns {
        udp_payload_size: size,
        dnssec_ok,
        ..OwnedEdns::default()
    });
    msg.to_vec().unwrap()
}

/// Sends `bytes` over UDP and waits up to `timeout` for one reply. A wait interrupted by a
/// signal (SIGCHLD when another test's child process exits) goes on waiting.
pub(crate) fn udp_exchange(port: u16, bytes: &[u8], timeout: Duration) -> Option<Vec<u8>> {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    socket.send_to(bytes, ("127.0.0.1", port)).unwrap();
    let deadline = Instant::now() + timeout;
    let mut buf = vec![0; 65535];
    loop {
        let left = deadline.checked_duration_since(Instant::now())?;
        socket
            .set_read_timeout(Some(left.max(Duration::from_millis(1))))
            .unwrap();
        match socket.recv_from(&mut buf) {
            Ok((n, _)) => {
                buf.truncate(n);
                return Some(buf);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return None,
        }
    }
}

/// Sends `bytes` over TCP and reads one framed reply.
pub(crate) fn tcp_exchange(port: u16, bytes: &[u8]) -> Option<Vec<u8>> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut framed = (bytes.len() as u16).to_be_bytes().to_vec();
    framed.extend_from_slice(bytes);
    stream.write_all(&framed).ok()?;
    read_frame(&mut stream)
}

/// Reads one length-prefixed message.
pub(crate) fn read_frame(stream: &mut TcpStream) -> Option<Vec<u8>> {
    let mut len = [0; 2];
    stream.read_exact(&mut len).ok()?;
    let mut reply = vec![0; usize::from(u16::from_be_bytes(len))];
    stream.read_exact(&mut reply).ok()?;
    Some(reply)
}

/// `dig @127.0.0.1 -p PORT ARGS...`, stdout.
pub(crate) fn dig(port: u16, args: &[&str]) -> String {
    let out = Command::new("dig")
        .args(["@127.0.0.1", "-p", &port.to_string(), "+time=5", "+tries=1"])
        .args(args)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs a dnspython script with `PORT` set; returns stdout, panics with stderr on failure.
pub(crate) fn python(port: u16, script: &str) -> String {
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .env("PORT", port.to_string())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "python failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `GET path` on 127.0.0.1:port: status and body.
pub(crate) fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    let status = text.split_whitespace().nth(1)?.parse().ok()?;
    let body = text.split_once("\r\n\r\n")?.1.to_owned();
    Some((status, body))
}

/// Polls `check` every 50 ms until it holds or [`PATIENCE`] passes.
pub(crate) fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while Instant::now() < deadline {
        if check() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("timed out waiting for {what}");
}

/// A running `dns-cache` with its Corefile in a temporary directory.
pub(crate) struct DnsCache {
    child: Child,
    /// The DNS port.
    pub(crate) port: u16,
    /// Two more free ports, `{HTTP}` and `{HTTP2}` in the Corefile.
    pub(crate) http: [u16; 2],
    /// The temporary directory (Corefile, hosts files, ...).
    pub(crate) dir: tempfile::TempDir,
    lines: Arc<Mutex<Vec<String>>>,
}

impl DnsCache {
    /// Starts the server with `corefile`, where `{PORT}` is a free port, `{HTTP}` and
    /// `{HTTP2}` two more and `{DIR}` the temporary directory; waits until it answers.
    pub(crate) fn start(corefile: &str) -> Self {
        Self::start_command(corefile, |conf| {
            let mut command = Command::new(env!("CARGO_BIN_EXE_dns-cache"));
            command.arg("-conf").arg(conf);
            command
        })
    }

    /// [`DnsCache::start`] with more command-line arguments after `-conf FILE`.
    pub(crate) fn start_with_args(corefile: &str, args: &[&str]) -> Self {
        Self::start_command(corefile, |conf| {
            let mut command = Command::new(env!("CARGO_BIN_EXE_dns-cache"));
            command.arg("-conf").arg(conf).args(args);
            command
        })
    }

    /// [`DnsCache::start`] with the open-file limits `soft` and `hard` (set by `sh`, which
    /// then execs the server, so the process ID is the server's).
    pub(crate) fn start_with_nofile(corefile: &str, soft: u32, hard: u32) -> Self {
        Self::start_command(corefile, |conf| {
            let mut command = Command::new("sh");
            command.arg("-c").arg(format!(
                "ulimit -Sn {soft} && ulimit -Hn {hard} && exec \"$0\" -conf \"$1\""
            ));
            command.arg(env!("CARGO_BIN_EXE_dns-cache")).arg(conf);
            command
        })
    }

    fn start_command(corefile: &str, command: impl FnOnce(&Path) -> Command) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let http = [free_port(), free_port()];
        let conf = dir.path().join("Corefile");
        std::fs::write(&conf, fill(corefile, port, http, dir.path())).unwrap();
        let mut child = command(&conf)
            .current_dir(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let stdout = child.stdout.take().unwrap();
        let sink = Arc::clone(&lines);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
        let server = Self {
            child,
            port,
            http,
            dir,
            lines,
        };
        server.wait_until_serving();
        server
    }

    fn wait_until_serving(&self) {
        let probe = query("probe.invalid.", Type::A, None, 1);
        eventually("the server to answer", || {
            udp_exchange(self.port, &probe, Duration::from_millis(200)).is_some()
        });
    }

    /// The Corefile path.
    pub(crate) fn corefile(&self) -> PathBuf {
        self.dir.path().join("Corefile")
    }

    /// Replaces the Corefile (placeholders filled as at start).
    pub(crate) fn rewrite(&self, corefile: &str) {
        std::fs::write(
            self.corefile(),
            fill(corefile, self.port, self.http, self.dir.path()),
        )
        .unwrap();
    }

    /// Sends a signal (`USR1`, `TERM`) to the server.
    pub(crate) fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// The process ID.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Every stdout line so far.
    pub(crate) fn lines(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }

    /// Waits for a stdout line satisfying `pred` and returns it.
    pub(crate) fn wait_line(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let mut found = None;
        eventually(what, || {
            found = self.lines().into_iter().find(|l| pred(l));
            found.is_some()
        });
        found.unwrap()
    }

    /// UDP exchange with the server.
    pub(crate) fn udp(&self, bytes: &[u8]) -> Option<Vec<u8>> {
        udp_exchange(self.port, bytes, Duration::from_secs(10))
    }

    /// UDP exchange, parsed check: the reply must parse.
    pub(crate) fn ask(&self, name: &str, qtype: Type) -> Vec<u8> {
        let reply = self
            .udp(&query(name, qtype, None, 0x4242))
            .expect("no reply");
        Message::parse(&reply).expect("reply parses");
        reply
    }

    /// Waits for the process to exit; its status code.
    pub(crate) fn wait_exit(&mut self) -> Option<i32> {
        let deadline = Instant::now() + PATIENCE;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }

    /// Resident memory in KiB (from /proc).
    pub(crate) fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap()
    }
}

impl Drop for DnsCache {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn fill(text: &str, port: u16, http: [u16; 2], dir: &Path) -> String {
    text.replace("{PORT}", &port.to_string())
        .replace("{HTTP}", &http[0].to_string())
        .replace("{HTTP2}", &http[1].to_string())
        .replace("{DIR}", &dir.display().to_string())
}

/// Debian's unbound, authoritative for `test.` on 127.0.0.1 (`local-data` only).
pub(crate) struct Unbound {
    child: Child,
    /// Its port.
    pub(crate) port: u16,
    _dir: tempfile::TempDir,
}

impl Unbound {
    /// Starts unbound with the `local-data` records (zone-file lines) under a static
    /// `test.` zone; `None` if unbound is not installed.
    pub(crate) fn start(records: &[&str]) -> Option<Self> {
        Self::start_on(free_port(), records)
    }

    /// As [`Unbound::start`], on `port`.
    pub(crate) fn start_on(port: u16, records: &[&str]) -> Option<Self> {
        if !have("unbound") {
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let mut conf = format!(
            "server:\n  interface: 127.0.0.1\n  port: {port}\n  num-threads: 1\n  do-daemonize: no\n  chroot: \"\"\n  username: \"\"\n  directory: \"{dir}\"\n  pidfile: \"\"\n  use-syslog: no\n  logfile: \"\"\n  verbosity: 0\n  access-control: 127.0.0.0/8 allow\n  do-ip6: no\n  module-config: \"iterator\"\n  local-zone: \"test.\" static\n  local-data: \"test. 3600 IN SOA ns.test. admin.test. 1 3600 600 86400 60\"\n  local-data: \"test. 3600 IN NS ns.test.\"\n  local-data: \"ns.test. 3600 IN A 127.0.0.1\"\n",
            dir = dir.path().display()
        );
        for record in records {
            conf.push_str(&format!("  local-data: '{record}'\n"));
        }
        conf.push_str("remote-control:\n  control-enable: no\n");
        let path = dir.path().join("unbound.conf");
        std::fs::write(&path, conf).unwrap();
        let binary = if Path::new("/usr/sbin/unbound").exists() {
            "/usr/sbin/unbound"
        } else {
            "unbound"
        };
        let child = Command::new(binary)
            .args(["-d", "-c"])
            .arg(&path)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let unbound = Self {
            child,
            port,
            _dir: dir,
        };
        let probe = query("ns.test.", Type::A, None, 7);
        eventually("unbound to answer", || {
            udp_exchange(port, &probe, Duration::from_millis(200)).is_some()
        });
        Some(unbound)
    }

    /// The address to forward to.
    pub(crate) fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }
}

impl Drop for Unbound {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
