package main

import (
	"fmt"
	"math"
	"strings"
)

var colors = map[string]string{"rein": "#1f77b4", "pi": "#d62728", "pi073": "#ff9896", "codex": "#2ca02c",
	"rein-nosession": "#9edae5", "floor-k4": "#7f7f7f"}

// window is the width, in turns, of the running median drawn over the per-turn gaps.
const window = 25

// gapSVG draws the per-turn gap of each harness against the turn number, on a log scale.
// order is the drawing order; labels name the series in the legend.
func gapSVG(series map[string][]float64, order []string, labels map[string]string) string {
	const w, h, left, right, top, bottom = 760, 360, 60, 20, 30, 45
	pw, ph := float64(w-left-right), float64(h-top-bottom)
	turns := 0
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		turns = max(turns, len(s))
		for _, v := range s {
			if v > 0 {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if turns == 0 {
		return `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>`
	}
	lo, hi = math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)))
	if lo == hi {
		hi = lo * 10
	}
	x := func(t int) float64 { return left + pw*float64(t-1)/float64(max(1, turns-1)) }
	y := func(v float64) float64 {
		v = math.Max(v, lo)
		return top + ph*(1-(math.Log10(v)-math.Log10(lo))/(math.Log10(hi)-math.Log10(lo)))
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", w, h, w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="%d" y="18" font-size="14">Harness gap per turn (end of response → next request), 500-turn read loop</text>`+"\n", left)
	for d := lo; d <= hi*1.0001; d *= 10 {
		for _, m := range []float64{1, 2, 5} {
			v := d * m
			if v > hi*1.0001 {
				break
			}
			stroke := "#eee"
			if m == 1 {
				stroke = "#ccc"
			}
			fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="%s"/>`+"\n", left, w-right, y(v), y(v), stroke)
			fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", left-6, y(v)+4, label(v))
		}
	}
	for t := 0; t <= turns; t += 50 {
		tt := max(t, 1)
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#eee"/>`+"\n", x(tt), x(tt), top, h-bottom)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%d</text>`+"\n", x(tt), h-bottom+16, t)
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">turn</text>`+"\n", left+pw/2, h-8)
	fmt.Fprintf(&b, `<text x="14" y="%.1f" transform="rotate(-90 14 %.1f)" text-anchor="middle">gap (ms, log scale)</text>`+"\n", top+ph/2, top+ph/2)
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.0f" height="%.0f" fill="none" stroke="#888"/>`+"\n", left, top, pw, ph)
	ly := top + 16
	for _, name := range order {
		s := series[name]
		if len(s) == 0 {
			continue
		}
		var raw, smooth []string
		for i, v := range s {
			raw = append(raw, fmt.Sprintf("%.1f,%.1f", x(i+1), y(v)))
			lo, hi := max(0, i-window/2), min(len(s), i+window/2+1)
			smooth = append(smooth, fmt.Sprintf("%.1f,%.1f", x(i+1), y(median(s[lo:hi]))))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-opacity="0.35" stroke-width="1" points="%s"/>`+"\n", colors[name], strings.Join(raw, " "))
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2.2" points="%s"/>`+"\n", colors[name], strings.Join(smooth, " "))
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="3"/><text x="%d" y="%d">%s (median %.2f ms)</text>`+"\n",
			w-right-250, w-right-230, ly, ly, colors[name], w-right-224, ly+4, labels[name], median(s))
		ly += 18
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func label(v float64) string {
	if v >= 1 {
		return fmt.Sprintf("%g", v)
	}
	return fmt.Sprintf("%.2g", v)
}
