import ArgumentParser
import LightOrganCore

/// `lightorgan`: a light organ split over the network.
@main
struct LightOrganCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lightorgan",
        abstract: "A light organ over the network: audio → bass/mid/treble levels → TCP → lamps.",
        discussion: """
            Settings come from a YAML file (--config, $LIGHTORGAN_CONFIG, ./lightorgan.yaml, \
            ~/.config/lightorgan/lightorgan.yaml, /etc/lightorgan/lightorgan.yaml), overridden by \
            LIGHTORGAN_… environment variables, overridden by options. Exit status 2: a bad setting.
            """,
        version: LightOrganVersion.current,
        subcommands: [
            DemoCommand.self, SendCommand.self, ReceiveCommand.self, DiscoverCommand.self, AnalyzeCommand.self,
            TestLEDsCommand.self, PairCommand.self,
        ]
    )
}
