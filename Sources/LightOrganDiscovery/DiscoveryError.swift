/// Why DNS-SD (through the Avahi daemon) cannot be used.
public enum DiscoveryError: Error, CustomStringConvertible {
    /// libavahi-client could not reach the daemon's bus at all; the text says why.
    case unavailable(String)

    public var description: String {
        switch self {
        case .unavailable(let why):
            "DNS-SD discovery is unavailable (\(why)): is avahi-daemon installed and running? "
                + "(sudo apt install avahi-daemon; sudo systemctl start avahi-daemon)"
        }
    }
}
