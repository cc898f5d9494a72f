/// The version of lightorgan: the one place that names it.
///
/// `lightorgan --version` prints it, the receiver's page shows it, and `scripts/build-pi` reads it from this
/// file for the Debian package's version (a package built from a commit that is not tagged `vVERSION` gets
/// `+gitDATE.TIME.COMMIT` after it, so that later commits sort higher). `scripts/release` refuses a tag that
/// does not match it. Semantic versioning: a release that changes the wire or a setting's meaning raises
/// the minor version (the major while it is 0).
public enum LightOrganVersion {
    /// The release's version, `MAJOR.MINOR.PATCH`.
    public static let current = "0.2.0"
}
