/// The 40-pin header of every Raspberry Pi since the B+ (the Pi 5 included): which physical pin
/// carries which BCM GPIO line. For messages and the wiring check (`lightorgan test-leds`).
public enum RaspberryPiHeader {
    /// BCM line → physical pin number (1…40).
    static let pins: [Int: Int] = [
        2: 3, 3: 5, 4: 7, 14: 8, 15: 10, 17: 11, 18: 12, 27: 13, 22: 15, 23: 16, 24: 18, 10: 19, 9: 21, 25: 22,
        11: 23, 8: 24, 7: 26, 0: 27, 1: 28, 5: 29, 6: 31, 12: 32, 13: 33, 19: 35, 16: 36, 26: 37, 20: 38, 21: 40,
    ]

    /// The physical pin of BCM line `line`, if it is on the header.
    public static func pin(forBCM line: Int) -> Int? { pins[line] }
}
