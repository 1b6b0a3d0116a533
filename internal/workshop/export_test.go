package workshop

// GuideText is guideText for workshop_test, which imports internal/cli
// (that imports this package) to check WORKSHOP.md against the binary.
var GuideText = guideText
