// swift-tools-version: 6.2

import PackageDescription

/// One list of language settings for every target (see ../shared/guides/style.md).
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

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
        // No traits: the settings file is read with libyaml (its YAML trait brings Yams, and Yams Foundation
        // with ICU's data: 11 MB more in the Pi's package).
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0", traits: []),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        // The pure-Swift core: frames, analysis, audio synthesis and decoding, the settings model.
        // No C dependency and no networking: it builds and tests on any machine.
        .target(
            name: "LightOrganCore",
            swiftSettings: swiftSettings
        ),
        // libasound2, seen from Swift; and the 10 lines of C that Swift cannot write (a variadic callback).
        .systemLibrary(
            name: "CALSA",
            pkgConfig: "alsa",
            providers: [.apt(["libasound2-dev"])]
        ),
        .target(name: "CALSAShim", dependencies: ["CALSA"]),
        // Adapter: audio inputs — ALSA capture, raw PCM on stdin, the PipeWire/PulseAudio monitor.
        .target(
            name: "LightOrganAudio",
            dependencies: ["LightOrganCore", "CALSA", "CALSAShim"],
            swiftSettings: swiftSettings
        ),
        // libgpiod (the kernel's GPIO character device), v1 or v2, behind one small C API.
        .systemLibrary(
            name: "CGPIOD",
            pkgConfig: "libgpiod",
            providers: [.apt(["libgpiod-dev"])]
        ),
        .target(name: "CGPIODShim", dependencies: ["CGPIOD"]),
        // libavahi-client: DNS-SD through the system's Avahi daemon (no home-made mDNS). Its headers
        // are in /usr/include; no pkg-config (its only cflag, -D_REENTRANT, is one SwiftPM refuses).
        .systemLibrary(
            name: "CAvahi",
            providers: [.apt(["libavahi-client-dev"])]
        ),
        // Adapter: zero configuration — the receiver publishes `_lightorgan._tcp`, the sender browses for it.
        .target(
            name: "LightOrganDiscovery",
            dependencies: ["LightOrganCore", "CAvahi", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        // libyaml, the YAML parser C programs use (Debian's libyaml-0-2).
        .systemLibrary(
            name: "CYAML",
            pkgConfig: "yaml-0.1",
            providers: [.apt(["libyaml-dev"])]
        ),
        // Adapter: the settings file (libyaml), environment and flags, read with swift-configuration.
        .target(
            name: "LightOrganSettings",
            dependencies: [
                "LightOrganCore",
                "CYAML",
                .product(name: "Configuration", package: "swift-configuration"),
            ],
            swiftSettings: swiftSettings
        ),
        // Adapter: the 3-byte frame stream over TCP, with SwiftNIO.
        .target(
            name: "LightOrganNetwork",
            dependencies: [
                "LightOrganCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Adapter: the receiver's page — HTTPS and WebSockets with SwiftNIO (NIOHTTP1, NIOWebSocket,
        // NIOSSL), the page itself compiled in. Its self-signed certificate comes from `openssl`
        // once (swift-certificates and swift-crypto would add a second BoringSSL: 2.5 MB to the .deb).
        .target(
            name: "LightOrganWeb",
            dependencies: [
                "LightOrganCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The page's own files, as byte arrays in the binary (`PackageResources.page_js`): nothing
            // is read at run time, and SwiftPM generates no Bundle (no Foundation) for embedded resources.
            resources: [
                .embedInCode("index.html"), .embedInCode("page.css"), .embedInCode("page.js"),
                .embedInCode("worklet.js"),
            ],
            swiftSettings: swiftSettings
        ),
        // spidev's ioctls (SPI_IOC_MESSAGE and friends are C macros): the LED strip on SPI.
        .target(name: "CSPIShim"),
        // Adapter: where levels become light — GPIO lines, LED strips (SPI, the Pi 5's PIO), the
        // terminal's virtual LEDs, plain stdout lines.
        .target(
            name: "LightOrganOutput",
            dependencies: ["LightOrganCore", "CGPIODShim", "CSPIShim"],
            swiftSettings: swiftSettings
        ),
        // The sender and receiver as swift-service-lifecycle services, assembled from the parts above.
        .target(
            name: "LightOrganServices",
            dependencies: [
                "LightOrganCore",
                "LightOrganDiscovery",
                "LightOrganNetwork",
                "LightOrganOutput",
                "LightOrganWeb",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The thin executable: parses the command line, loads settings, runs services.
        .executableTarget(
            name: "LightOrganCLI",
            dependencies: [
                "LightOrganAudio",
                "LightOrganCore",
                "LightOrganDiscovery",
                "LightOrganNetwork",
                "LightOrganSettings",
                "LightOrganOutput",
                "LightOrganServices",
                "LightOrganWeb",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The CPU benchmarks of the analysis (scripts/bench-analysis runs it in a release build) and a strip's frame.
        .executableTarget(
            name: "LightOrganBench",
            dependencies: ["LightOrganCore"],
            swiftSettings: swiftSettings
        ),
        // What the tests and the fuzzer share: an output that records what it is shown, a seedable generator.
        // Not in any product.
        .target(
            name: "LightOrganTestSupport",
            dependencies: ["LightOrganCore"],
            swiftSettings: swiftSettings
        ),
        // Property-based fuzzing of the frame decoding, the connection policy and the settings loader
        // (scripts/test runs it in a release build, millions of inputs).
        .executableTarget(
            name: "LightOrganFuzz",
            dependencies: [
                "LightOrganCore",
                "LightOrganNetwork",
                "LightOrganSettings",
                "LightOrganTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LightOrganCoreTests",
            dependencies: ["LightOrganCore", "LightOrganTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LightOrganOutputTests",
            dependencies: ["LightOrganCore", "LightOrganOutput", "LightOrganTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LightOrganAudioTests",
            dependencies: ["LightOrganAudio", "LightOrganCore"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LightOrganSettingsTests",
            dependencies: ["LightOrganCore", "LightOrganSettings"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LightOrganNetworkTests",
            dependencies: [
                "LightOrganCore",
                "LightOrganNetwork",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOTestUtils", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LightOrganServicesTests",
            dependencies: [
                "LightOrganCore",
                "LightOrganNetwork",
                "LightOrganServices",
                "LightOrganTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The page's socket handlers on NIO's embedded channel, with the receiver's own backend behind them.
        .testTarget(
            name: "LightOrganWebTests",
            dependencies: [
                "LightOrganCore",
                "LightOrganNetwork",
                "LightOrganServices",
                "LightOrganTestSupport",
                "LightOrganWeb",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LightOrganEndToEndTests",
            dependencies: [
                "LightOrganCore",
                "LightOrganNetwork",
                "LightOrganOutput",
                "LightOrganServices",
                "LightOrganTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
