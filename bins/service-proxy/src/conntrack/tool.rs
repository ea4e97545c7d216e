//! The `conntrack` program (conntrack-tools, Debian package `conntrack`), as kube-proxy ran it
//! before it spoke netlink itself: `conntrack -L` lists one family's UDP flows, `conntrack -D`
//! deletes those a [`Filter`] matches. The command lines and the reading of the output are pure
//! functions; [`Conntrack`] runs them.

use std::net::IpAddr;
use std::process::Stdio;
use std::time::Duration;

use iptables_model::addr::parse_ip_lenient;
use iptables_model::kube::Protocol;
use tokio::process::Command;

use super::plan::{Filter, Flow};

/// The program, looked up in `PATH`.
const PROGRAM: &str = "conntrack";

/// How long one run may take (a listing of a large table takes a while).
const TIMEOUT: Duration = Duration::from_secs(30);

/// Why a run of `conntrack` did not do its job.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The program is not installed.
    #[error("the conntrack program is not installed (Debian/Ubuntu package `conntrack`)")]
    Missing,
    /// It could not be started or its output could not be read.
    #[error("`{command}`: {source}")]
    Io {
        /// The command line.
        command: String,
        /// What failed.
        source: std::io::Error,
    },
    /// It took longer than its time limit (it was killed).
    #[error("`{command}` did not finish within {TIMEOUT:?}")]
    Timeout {
        /// The command line.
        command: String,
    },
    /// It failed.
    #[error("`{command}` failed ({status}): {stderr}")]
    Failed {
        /// The command line.
        command: String,
        /// Its exit status.
        status: std::process::ExitStatus,
        /// What it wrote on stderr.
        stderr: String,
    },
}

/// `-f ipv4` or `-f ipv6`.
const fn family(ipv6: bool) -> &'static str {
    if ipv6 { "ipv6" } else { "ipv4" }
}

/// The arguments that list the family's UDP flows.
pub fn list_args(ipv6: bool) -> Vec<String> {
    ["-L", "-p", "udp", "-f", family(ipv6)]
        .map(String::from)
        .to_vec()
}

/// The arguments that delete the UDP flows `filter` matches, in the family `ipv6`.
pub fn delete_args(filter: &Filter, ipv6: bool) -> Vec<String> {
    let mut args: Vec<String> = ["-D", "-p", "udp", "-f", family(ipv6)]
        .map(String::from)
        .to_vec();
    let (port, reply) = match *filter {
        Filter::ServiceIp { frontend, reply } => {
            args.extend(["--orig-dst".into(), frontend.ip().to_string()]);
            (frontend.port(), reply)
        }
        Filter::NodePort { node_port, reply } => (node_port, reply),
    };
    args.extend([
        "--orig-port-dst".into(),
        port.to_string(),
        "--reply-src".into(),
        reply.ip().to_string(),
        "--reply-port-src".into(),
        reply.port().to_string(),
    ]);
    args
}

/// One line of `conntrack -L`, such as `udp 17 29 src=10.0.0.1 dst=172.30.0.10 sport=4000
/// dport=53 [UNREPLIED] src=10.244.1.3 dst=10.0.0.1 sport=53 dport=4000 mark=0 use=1`: the
/// first `src`/`dst`/`sport`/`dport` are the original direction, the second the reply's.
/// `None` for a line that is not a TCP, UDP or SCTP flow.
pub fn parse_flow(line: &str) -> Option<Flow> {
    let mut words = line.split_whitespace();
    // `-o extended` puts the L3 family first (`ipv4 2 udp 17 …`).
    let protocol = words.find_map(|word| match word {
        "tcp" => Some(Protocol::Tcp),
        "udp" => Some(Protocol::Udp),
        "sctp" => Some(Protocol::Sctp),
        _ => None,
    })?;
    let mut tuples: [[Option<&str>; 4]; 2] = [[None; 4]; 2];
    for word in words {
        let Some((key, value)) = word.split_once('=') else {
            continue;
        };
        let Some(field) = ["src", "dst", "sport", "dport"]
            .iter()
            .position(|k| *k == key)
        else {
            continue;
        };
        // The first free slot: the original tuple's, then the reply's.
        if let Some(slot) = tuples
            .iter_mut()
            .map(|t| &mut t[field])
            .find(|s| s.is_none())
        {
            *slot = Some(value);
        }
    }
    let [orig, reply] = tuples;
    let ip = |text: Option<&str>| -> Option<IpAddr> { parse_ip_lenient(text?) };
    let port = |text: Option<&str>| -> Option<u16> { text?.parse().ok() };
    Some(Flow {
        protocol,
        orig_dst: ip(orig[1])?,
        orig_port_dst: port(orig[3])?,
        reply_src: ip(reply[0])?,
        reply_port_src: port(reply[2])?,
    })
}

/// How many flows `conntrack -D` says it deleted (`… N flow entries have been deleted.`, on
/// stderr).
pub fn deleted_count(stderr: &str) -> Option<u64> {
    stderr.lines().find_map(|line| {
        let before = line.strip_suffix("flow entries have been deleted.")?;
        before.split_whitespace().last()?.parse().ok()
    })
}

/// The `conntrack` program for one IP family.
#[derive(Clone, Debug)]
pub struct Conntrack {
    ipv6: bool,
}

impl Conntrack {
    /// The program for the family `ipv6`.
    pub const fn new(ipv6: bool) -> Self {
        Self { ipv6 }
    }

    /// Runs `conntrack ARGS`: its stdout and stderr when it ran, whatever its exit status.
    async fn run(&self, args: &[String]) -> Result<std::process::Output, ToolError> {
        let command = format!("{PROGRAM} {}", args.join(" "));
        let child = Command::new(PROGRAM)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|source| match source.kind() {
                std::io::ErrorKind::NotFound => ToolError::Missing,
                _ => ToolError::Io {
                    command: command.clone(),
                    source,
                },
            })?;
        match tokio::time::timeout(TIMEOUT, child.wait_with_output()).await {
            Err(_) => Err(ToolError::Timeout { command }),
            Ok(Err(source)) => Err(ToolError::Io { command, source }),
            Ok(Ok(output)) => Ok(output),
        }
    }

    /// The family's UDP flows.
    ///
    /// # Errors
    ///
    /// [`ToolError`] when the program is missing or fails.
    pub async fn list(&self) -> Result<Vec<Flow>, ToolError> {
        let args = list_args(self.ipv6);
        let output = self.run(&args).await?;
        if !output.status.success() {
            return Err(failed(&args, &output));
        }
        let text = String::from_utf8_lossy(&output.stdout);
        Ok(text.lines().filter_map(parse_flow).collect())
    }

    /// Deletes the flows `filter` matches; returns how many there were (0 when they had gone
    /// already, which `conntrack` reports with exit status 1).
    ///
    /// # Errors
    ///
    /// [`ToolError`] when the program is missing or fails.
    pub async fn delete(&self, filter: &Filter) -> Result<u64, ToolError> {
        let args = delete_args(filter, self.ipv6);
        let output = self.run(&args).await?;
        let stderr = String::from_utf8_lossy(&output.stderr);
        match deleted_count(&stderr) {
            Some(n) if output.status.success() || n == 0 => Ok(n),
            _ => Err(failed(&args, &output)),
        }
    }
}

fn failed(args: &[String], output: &std::process::Output) -> ToolError {
    ToolError::Failed {
        command: format!("{PROGRAM} {}", args.join(" ")),
        status: output.status,
        stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddr;

    fn socket(text: &str) -> SocketAddr {
        text.parse().unwrap()
    }

    #[test]
    fn listing_lines_give_the_original_destination_and_the_reply_source() {
        // As conntrack v1.4.7 prints them (IPv4 DNATed, IPv6 assured, `-o extended`).
        let dnat = "udp      17 29 src=10.9.0.1 dst=172.30.9.9 sport=4000 dport=53 [UNREPLIED] src=10.9.0.2 dst=10.9.0.1 sport=5353 dport=4000 mark=0 use=1";
        assert_eq!(
            parse_flow(dnat),
            Some(Flow {
                protocol: Protocol::Udp,
                orig_dst: "172.30.9.9".parse().unwrap(),
                orig_port_dst: 53,
                reply_src: "10.9.0.2".parse().unwrap(),
                reply_port_src: 5353,
            })
        );
        let v6 = "udp      17 117 src=fd00::1 dst=fd00:172::10 sport=40000 dport=53 src=fd00:180::2 dst=fd00::1 sport=5353 dport=40000 [ASSURED] mark=0 use=1";
        let flow = parse_flow(v6).unwrap();
        assert_eq!(flow.orig_dst, "fd00:172::10".parse::<IpAddr>().unwrap());
        assert_eq!(flow.reply_src, "fd00:180::2".parse::<IpAddr>().unwrap());
        let extended = "ipv4     2 tcp      6 431999 ESTABLISHED src=10.0.0.1 dst=10.96.0.1 sport=5000 dport=443 src=192.168.0.2 dst=10.0.0.1 sport=6443 dport=5000 [ASSURED] mark=0 use=1";
        let flow = parse_flow(extended).unwrap();
        assert_eq!(flow.protocol, Protocol::Tcp);
        assert_eq!(flow.reply_port_src, 6443);
        for other in [
            "icmp     1 29 src=10.0.0.1 dst=10.0.0.2 type=8 code=0 id=1 src=10.0.0.2 dst=10.0.0.1 type=0 code=0 id=1 mark=0 use=1",
            "conntrack v1.4.7 (conntrack-tools): 1 flow entries have been shown.",
            "udp 17 29 src=10.0.0.1 dst=10.0.0.2 sport=1 dport=2",
            "",
        ] {
            assert_eq!(parse_flow(other), None, "{other}");
        }
    }

    #[test]
    fn filters_become_delete_commands() {
        let service = Filter::ServiceIp {
            frontend: socket("172.30.0.10:53"),
            reply: socket("10.180.0.3:5353"),
        };
        assert_eq!(
            delete_args(&service, false).join(" "),
            "-D -p udp -f ipv4 --orig-dst 172.30.0.10 --orig-port-dst 53 --reply-src 10.180.0.3 --reply-port-src 5353"
        );
        let node_port = Filter::NodePort {
            node_port: 30053,
            reply: socket("[fd00:180::3]:5353"),
        };
        assert_eq!(
            delete_args(&node_port, true).join(" "),
            "-D -p udp -f ipv6 --orig-port-dst 30053 --reply-src fd00:180::3 --reply-port-src 5353"
        );
        assert_eq!(list_args(true).join(" "), "-L -p udp -f ipv6");
    }

    #[test]
    fn the_deleted_count_is_read_from_the_summary() {
        let summary = "conntrack v1.4.7 (conntrack-tools): 3 flow entries have been deleted.\n";
        assert_eq!(deleted_count(summary), Some(3));
        let none = "conntrack v1.4.7 (conntrack-tools): 0 flow entries have been deleted.";
        assert_eq!(deleted_count(none), Some(0));
        assert_eq!(
            deleted_count("conntrack v1.4.7 (conntrack-tools): Operation not permitted"),
            None
        );
    }
}
