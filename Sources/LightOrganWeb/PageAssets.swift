/// The receiver's page, compiled into the binary: `index.html`, `page.css`, `page.js` and
/// `worklet.js` beside this file are real files (an editor, a linter and a reviewer see them as
/// what they are), turned into byte arrays at build time by SwiftPM's `.embedInCode` resources
/// (`PackageResources.index_html: [UInt8]` …). No file is read at run time, no CDN, no Foundation.
enum PageAssets {
    /// One file the page server answers with.
    struct File: Sendable {
        /// The `Content-Type` header's value.
        let type: String
        /// The file's bytes as built in.
        let bytes: [UInt8]
    }

    /// Path → file: `GET /`, `/page.css`, `/page.js`, `/worklet.js`.
    static let files: [String: File] = [
        "/": File(type: "text/html; charset=utf-8", bytes: PackageResources.index_html),
        "/page.css": File(type: "text/css; charset=utf-8", bytes: PackageResources.page_css),
        "/page.js": File(type: "text/javascript; charset=utf-8", bytes: PackageResources.page_js),
        "/worklet.js": File(type: "text/javascript; charset=utf-8", bytes: PackageResources.worklet_js),
    ]
}
