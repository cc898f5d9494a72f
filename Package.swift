// swift-tools-version: 6.2

import PackageDescription

/// One list of language settings for every target (see ../shared/guides/style.md).
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

/// A product of swift-nio (NIOCore, NIOPosix, NIOEmbedded, …).
func nio(_ product: String) -> Target.Dependency { .product(name: product, package: "swift-nio") }
/// swift-log's Logging.
let logging = Target.Dependency.product(name: "Logging", package: "swift-log")
/// swift-service-lifecycle's ServiceLifecycle.
let serviceLifecycle = Target.Dependency.product(name: "ServiceLifecycle", package: "swift-service-lifecycle")

/// A Swift target with the package's language settings.
func swiftTarget(_ name: String, _ dependencies: [Target.Dependency] = []) -> Target {
    .target(name: name, dependencies: dependencies, swiftSettings: swiftSettings)
}

/// A C library from Debian's `package`, found by pkg-config (nil: its headers are in /usr/include).
func debianLibrary(_ name: String, pkgConfig: String?, package: String) -> Target {
    .systemLibrary(name: name, pkgConfig: pkgConfig, providers: [.apt([package])])
}

/// A Swift Testing target with the package's language settings, compiled without optimization in the tests'
/// release build too (`-Onone` after SwiftPM's `-O`): the code under test is optimized as it ships, the tests' own
/// bodies (expanded `#expect`s, mostly) compile in 52 CPU seconds, not 92, and run as fast (the unit tests 8 s).
func tests(_ name: String, _ dependencies: [Target.Dependency]) -> Target {
    .testTarget(name: name, dependencies: dependencies, swiftSettings: swiftSettings + [.unsafeFlags(["-Onone"])])
}

let package = Package(
    name: "lightorgan",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "lightorgan", targets: ["LightOrganCLI"]),
        .library(name: "LightOrganCore", targets: ["LightOrganCore"]),
        .executable(name: "lightorgan-bench", targets: ["LightOrganBench"]),
        .executable(name: "lightorgan-fuzz", targets: ["LightOrganFuzz"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        // The pure-Swift core: frames, analysis, audio synthesis and decoding, the settings model.
        // No C dependency and no networking: it builds and tests on any machine.
        swiftTarget("LightOrganCore"),
        // What the core must not do, as NIOPosix beside NIOCore: threads of our own (pthreads) and child processes
        // (posix_spawn), for the adapters and services.
        swiftTarget("LightOrganPOSIX", ["LightOrganCore"]),
        // libasound2, seen from Swift; and the 10 lines of C that Swift cannot write (a variadic callback).
        debianLibrary("CALSA", pkgConfig: "alsa", package: "libasound2-dev"),
        .target(name: "CALSAShim", dependencies: ["CALSA"]),
        // A record stream of the PulseAudio/PipeWire server through libpulse, loaded with dlopen (the Pi's
        // package needs no libpulse0), and the server's own timing of it: when its audio was made.
        .target(name: "CPulseShim", linkerSettings: [.linkedLibrary("dl"), .linkedLibrary("pthread")]),
        // Adapter: audio inputs — ALSA capture, raw PCM on stdin, the PipeWire/PulseAudio monitor.
        swiftTarget("LightOrganAudio", ["LightOrganCore", "LightOrganPOSIX", "CALSA", "CALSAShim", "CPulseShim"]),
        // libgpiod (the kernel's GPIO character device), v1 or v2, behind one small C API.
        debianLibrary("CGPIOD", pkgConfig: "libgpiod", package: "libgpiod-dev"),
        .target(name: "CGPIODShim", dependencies: ["CGPIOD"]),
        // libavahi-client: DNS-SD through the system's Avahi daemon (no home-made mDNS). Its headers
        // are in /usr/include; no pkg-config (its only cflag, -D_REENTRANT, is one SwiftPM refuses).
        debianLibrary("CAvahi", pkgConfig: nil, package: "libavahi-client-dev"),
        // Adapter: zero configuration — the receiver publishes `_lightorgan._tcp`, the sender browses for it.
        swiftTarget("LightOrganDiscovery", ["LightOrganCore", "CAvahi", logging]),
        // libyaml, the YAML parser C programs use (Debian's libyaml-0-2).
        debianLibrary("CYAML", pkgConfig: "yaml-0.1", package: "libyaml-dev"),
        // Adapter: the settings: options over the environment over the page's file over the settings file (libyaml).
        swiftTarget("LightOrganSettings", ["LightOrganCore", "CYAML"]),
        // Adapter: the 3-byte frame stream over TCP, with SwiftNIO.
        swiftTarget(
            "LightOrganNetwork",
            [
                "LightOrganCore",
                "LightOrganPOSIX",
                nio("NIOCore"),
                nio("NIOPosix"),
                logging,
            ]),
        // Debian's OpenSSL (libssl3) for the page's TLS, behind a small C API (its API is mostly macros): the Pi's
        // apt brings its security fixes, and no TLS library is compiled into lightorgan.
        .target(name: "CTLSShim", linkerSettings: [.linkedLibrary("ssl"), .linkedLibrary("crypto")]),
        // Adapter: the receiver's page — HTTPS and WebSockets with SwiftNIO (NIOHTTP1, NIOWebSocket) over
        // CTLSShim, the page itself compiled in. Its self-signed certificate comes from `openssl` once.
        .target(
            name: "LightOrganWeb",
            dependencies: [
                "LightOrganCore",
                "LightOrganPOSIX",
                nio("NIOCore"),
                nio("NIOPosix"),
                nio("NIOHTTP1"),
                nio("NIOWebSocket"),
                "CTLSShim",
                logging,
            ],
            // The page's own files, as byte arrays in the binary (`PackageResources.page_js`): nothing
            // is read at run time, and SwiftPM generates no Bundle (no Foundation) for embedded resources.
            resources: [
                .embedInCode("index.html"), .embedInCode("page.css"), .embedInCode("page.js"),
                .embedInCode("worklet.js"),
            ],
            swiftSettings: swiftSettings
        ),
        // libmosquitto, Eclipse Mosquitto's own MQTT client (Debian's libmosquitto1): reconnects, keepalive,
        // last will and TLS. Its header is in /usr/include; no pkg-config: its -L (the library folder of the
        // root it is built against) would let the linker take libgpiod.so over the static libgpiod.a.
        debianLibrary("CMosquitto", pkgConfig: nil, package: "libmosquitto-dev"),
        // Adapter: a connection to an MQTT broker (the home's hub: Home Assistant).
        swiftTarget("LightOrganMQTT", ["LightOrganCore", "CMosquitto"]),
        // spidev's ioctls (SPI_IOC_MESSAGE and friends are C macros): the LED strip on SPI.
        .target(name: "CSPIShim"),
        // Adapter: where levels become light — GPIO lines, LED strips (SPI, the Pi 5's PIO), the
        // terminal's virtual LEDs, plain stdout lines.
        swiftTarget("LightOrganOutput", ["LightOrganCore", "LightOrganPOSIX", "CGPIODShim", "CSPIShim"]),
        // The sender and receiver as swift-service-lifecycle services, assembled from the parts above.
        swiftTarget(
            "LightOrganServices",
            [
                "LightOrganCore",
                "LightOrganPOSIX",
                "LightOrganDiscovery",
                "LightOrganMQTT",
                "LightOrganNetwork",
                "LightOrganOutput",
                "LightOrganWeb",
                logging,
                nio("NIOCore"),
                nio("NIOPosix"),
                serviceLifecycle,
            ]),
        // The thin executable: parses the command line, loads settings, runs services.
        .executableTarget(
            name: "LightOrganCLI",
            dependencies: [
                "LightOrganAudio",
                "LightOrganCore",
                "LightOrganPOSIX",
                "LightOrganDiscovery",
                "LightOrganNetwork",
                "LightOrganSettings",
                "LightOrganOutput",
                "LightOrganServices",
                "LightOrganWeb",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                logging,
                serviceLifecycle,
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ], swiftSettings: swiftSettings),
        // The CPU benchmarks of the analysis (scripts/bench-analysis runs it in a release build) and a strip's frame.
        .executableTarget(name: "LightOrganBench", dependencies: ["LightOrganCore"], swiftSettings: swiftSettings),
        // What the tests and the fuzzer share: an output that records what it is shown, a seedable generator.
        // Not in any product.
        swiftTarget("LightOrganTestSupport", ["LightOrganCore"]),
        // Property-based fuzzing of the frame decoding, the connection policy and the settings loader
        // (scripts/test runs it in a release build, millions of inputs).
        .executableTarget(
            name: "LightOrganFuzz",
            dependencies: [
                "LightOrganCore",
                "LightOrganNetwork",
                "LightOrganSettings",
                "LightOrganTestSupport",
                "LightOrganWeb",
                nio("NIOCore"),
                nio("NIOEmbedded"),
            ], swiftSettings: swiftSettings),
        tests("LightOrganCoreTests", ["LightOrganCore", "LightOrganTestSupport"]),
        tests("LightOrganPOSIXTests", ["LightOrganCore", "LightOrganPOSIX"]),
        tests("LightOrganOutputTests", ["LightOrganCore", "LightOrganOutput", "LightOrganTestSupport"]),
        tests("LightOrganAudioTests", ["LightOrganAudio", "LightOrganCore", "LightOrganPOSIX"]),
        tests("LightOrganSettingsTests", ["LightOrganCore", "LightOrganSettings"]),
        tests(
            "LightOrganNetworkTests",
            [
                "LightOrganCore",
                "LightOrganNetwork",
                logging,
                nio("NIOCore"),
                nio("NIOEmbedded"),
                nio("NIOTestUtils"),
            ]),
        tests(
            "LightOrganServicesTests",
            [
                "LightOrganCore",
                "LightOrganNetwork",
                "LightOrganServices",
                "LightOrganTestSupport",
                logging,
                nio("NIOCore"),
                nio("NIOEmbedded"),
                nio("NIOPosix"),
            ]),
        // The page's socket handlers on NIO's embedded channel, with the receiver's own backend behind them.
        tests(
            "LightOrganWebTests",
            [
                "LightOrganCore",
                "LightOrganNetwork",
                "LightOrganServices",
                "LightOrganTestSupport",
                "LightOrganWeb",
                logging,
                nio("NIOCore"),
                nio("NIOEmbedded"),
                nio("NIOWebSocket"),
            ]),
        tests(
            "LightOrganEndToEndTests",
            [
                "LightOrganCore",
                "LightOrganNetwork",
                "LightOrganOutput",
                "LightOrganServices",
                "LightOrganTestSupport",
                logging,
                nio("NIOCore"),
                nio("NIOPosix"),
                serviceLifecycle,
            ]),
    ]
)
