package report

import (
	"math"
	"strconv"
	"testing"
)

// luminance is the WCAG 2 relative luminance of a #rrggbb colour.
func luminance(t *testing.T, hex string) float64 {
	t.Helper()
	if len(hex) != 7 || hex[0] != '#' {
		t.Fatalf("colour %q is not #rrggbb", hex)
	}
	var l float64
	for i, weight := range []float64{0.2126, 0.7152, 0.0722} {
		v, err := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
		if err != nil {
			t.Fatalf("colour %q: %v", hex, err)
		}
		c := float64(v) / 255
		if c <= 0.04045 {
			c /= 12.92
		} else {
			c = math.Pow((c+0.055)/1.055, 2.4)
		}
		l += weight * c
	}
	return l
}

func contrast(t *testing.T, a, b string) float64 {
	la, lb := luminance(t, a), luminance(t, b)
	return (math.Max(la, lb) + 0.05) / (math.Min(la, lb) + 0.05)
}

func TestContrastFormula(t *testing.T) {
	if c := contrast(t, "#000000", "#ffffff"); math.Abs(c-21) > 0.01 {
		t.Fatalf("black on white: %.2f, want 21", c)
	}
	if c := contrast(t, "#777777", "#ffffff"); math.Abs(c-4.48) > 0.01 {
		t.Fatalf("#777 on white: %.2f, want 4.48", c)
	}
}

// Every fill stands out from the lane (WCAG's 3:1 for graphics), every label
// on a fill and every text or mark on the background reads (at least 3:1).
func TestPaletteContrast(t *testing.T) {
	const min = 3.0
	check := func(what, a, b string) {
		if c := contrast(t, a, b); c < min {
			t.Errorf("%s: %s on %s has contrast %.2f, want at least %.1f", what, a, b, c, min)
		}
	}
	for kind, st := range kindStyle {
		check(kind+" fill against the lane", st.fill, laneBackground)
		if !st.thin {
			check(kind+" label on its fill", st.text, st.fill)
		}
	}
	for kind, ms := range markStyle {
		check(kind+" mark", ms.colour, laneBackground)
	}
	for what, c := range map[string]string{"text": textColour, "quiet text": quietText, "orphan": orphanColour, "markers": markerColour, "lane border": laneBorder,
		"moments": momentColour, "rules dropped hatch": droppedColour, "window band": windowColour} {
		check(what, c, laneBackground)
	}
	check("marker numbers", "#ffffff", markerColour)
	check("moment numbers", "#ffffff", momentColour)
	for w, ws := range windowStyle {
		check(w+" failed request", ws.fill, laneBackground)
	}
	// Meanings must not share a colour (kubelet stopped and the orphan band once did).
	seen := map[string]string{orphanColour: "orphan"}
	for kind, st := range kindStyle {
		if other, dup := seen[st.fill]; dup {
			t.Errorf("%s and %s share the colour %s", kind, other, st.fill)
		}
		seen[st.fill] = kind
	}
	for kind, ms := range markStyle {
		if other, dup := seen[ms.colour]; dup {
			t.Errorf("%s and %s share the colour %s", kind, other, ms.colour)
		}
		seen[ms.colour] = kind
	}
	for w, ws := range windowStyle {
		if other, dup := seen[ws.fill]; dup {
			t.Errorf("%s and %s share the colour %s", w, other, ws.fill)
		}
		seen[ws.fill] = w
	}
}
