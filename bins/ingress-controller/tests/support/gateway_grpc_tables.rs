//! The request tables of the Gateway API conformance suite's GRPCRoute tests (gateway-api
//! v1.6.1, `conformance/tests/grpcroute-*.go`, profile GATEWAY-GRPC: the `testCases` of each
//! test), written once for the two places that replay them: the candidate order without nginx
//! (`src/gateway/grpc_conformance.rs`) and the real nginx (`tests/e2e_gateway_grpc.rs`).
#![allow(dead_code, unreachable_pub)]

/// The echo service's methods the tests call (`EchoRequest`, `EchoTwoRequest`,
/// `EchoThreeRequest`).
pub const ECHO: &str = "/gateway_api_conformance.echo_basic.grpcecho.GrpcEcho/Echo";
/// See [`ECHO`].
pub const ECHO_TWO: &str = "/gateway_api_conformance.echo_basic.grpcecho.GrpcEcho/EchoTwo";
/// See [`ECHO`].
pub const ECHO_THREE: &str = "/gateway_api_conformance.echo_basic.grpcecho.GrpcEcho/EchoThree";

/// One call of a table: `:authority` (empty: the Gateway's address), the method's path, the
/// metadata, and the backend that must answer (`None`: gRPC status `UNIMPLEMENTED`).
pub type GrpcCase = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
    Option<&'static str>,
);

/// `(test, manifest file, Gateway, cases)`: every call is sent to the Gateway's
/// port 80 listeners (the listener chosen by host name, S-LI.1).
pub type GrpcTable = (
    &'static str,
    &'static str,
    &'static str,
    &'static [GrpcCase],
);

/// The tables.
pub const GRPC: [GrpcTable; 4] = [
    (
        "GRPCExactMethodMatching",
        "grpcroute-exact-method-matching.yaml",
        "same-namespace",
        &[
            ("", ECHO, &[], Some("grpc-infra-backend-v1")),
            ("", ECHO_TWO, &[], Some("grpc-infra-backend-v2")),
            ("", ECHO_THREE, &[], None),
        ],
    ),
    (
        "GRPCRouteHeaderMatching",
        "grpcroute-header-matching.yaml",
        "same-namespace",
        &[
            (
                "",
                ECHO,
                &[("Version", "one")],
                Some("grpc-infra-backend-v1"),
            ),
            (
                "",
                ECHO,
                &[("Version", "two")],
                Some("grpc-infra-backend-v2"),
            ),
            (
                "",
                ECHO,
                &[("Version", "two"), ("Color", "orange")],
                Some("grpc-infra-backend-v1"),
            ),
            (
                "",
                ECHO,
                &[("Version", "two"), ("Color", "blue")],
                Some("grpc-infra-backend-v2"),
            ),
            ("", ECHO, &[("Color", "orange")], None),
            ("", ECHO, &[("Some-Other-Header", "one")], None),
            (
                "",
                ECHO,
                &[("Color", "blue")],
                Some("grpc-infra-backend-v1"),
            ),
            (
                "",
                ECHO,
                &[("Color", "green")],
                Some("grpc-infra-backend-v1"),
            ),
            ("", ECHO, &[("Color", "red")], Some("grpc-infra-backend-v2")),
            (
                "",
                ECHO,
                &[("Color", "yellow")],
                Some("grpc-infra-backend-v2"),
            ),
            ("", ECHO, &[("Color", "purple")], None),
        ],
    ),
    (
        "GRPCRouteListenerHostnameMatching",
        "grpcroute-listener-hostname-matching.yaml",
        "grpcroute-listener-hostname-matching",
        &[
            ("bar.com", ECHO, &[], Some("grpc-infra-backend-v1")),
            ("foo.bar.com", ECHO, &[], Some("grpc-infra-backend-v2")),
            ("baz.bar.com", ECHO, &[], Some("grpc-infra-backend-v3")),
            ("boo.bar.com", ECHO, &[], Some("grpc-infra-backend-v3")),
            (
                "multiple.prefixes.bar.com",
                ECHO,
                &[],
                Some("grpc-infra-backend-v3"),
            ),
            (
                "multiple.prefixes.foo.com",
                ECHO,
                &[],
                Some("grpc-infra-backend-v3"),
            ),
            ("foo.com", ECHO, &[], None),
            ("no.matching.host", ECHO, &[], None),
        ],
    ),
    (
        "GRPCRouteNamedRule",
        "grpcroute-named-rule.yaml",
        "same-namespace",
        &[
            ("", ECHO, &[], Some("grpc-infra-backend-v1")),
            ("", ECHO_TWO, &[], Some("grpc-infra-backend-v2")),
        ],
    ),
];
