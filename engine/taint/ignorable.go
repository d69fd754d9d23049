package taint

import "unicode"

// defaultIgnorable is Unicode's Default_Ignorable_Code_Point: what a
// renderer shows nothing for, so what can be laced between a secret's
// characters without a reader seeing it. Format characters (Cf) are most
// of it, and fold drops them all; the rest are variation selectors, the
// combining grapheme joiner, the Hangul fillers, Khmer's inherent vowels,
// Mongolian's free variation selectors and the reserved code points
// Unicode keeps ignorable.
//
// From DerivedCoreProperties.txt of Unicode 16.0.0 (unchanged for this
// property since 14.0.0, which added U+180F), every range of
// Default_Ignorable_Code_Point, categories as the file gives them.
var defaultIgnorable = &unicode.RangeTable{
	R16: []unicode.Range16{
		{Lo: 0x00AD, Hi: 0x00AD, Stride: 1}, // Cf SOFT HYPHEN
		{Lo: 0x034F, Hi: 0x034F, Stride: 1}, // Mn COMBINING GRAPHEME JOINER
		{Lo: 0x061C, Hi: 0x061C, Stride: 1}, // Cf ARABIC LETTER MARK
		{Lo: 0x115F, Hi: 0x1160, Stride: 1}, // Lo HANGUL CHOSEONG FILLER..HANGUL JUNGSEONG FILLER
		{Lo: 0x17B4, Hi: 0x17B5, Stride: 1}, // Mn KHMER VOWEL INHERENT AQ..AA
		{Lo: 0x180B, Hi: 0x180D, Stride: 1}, // Mn MONGOLIAN FREE VARIATION SELECTOR ONE..THREE
		{Lo: 0x180E, Hi: 0x180E, Stride: 1}, // Cf MONGOLIAN VOWEL SEPARATOR
		{Lo: 0x180F, Hi: 0x180F, Stride: 1}, // Mn MONGOLIAN FREE VARIATION SELECTOR FOUR
		{Lo: 0x200B, Hi: 0x200F, Stride: 1}, // Cf ZERO WIDTH SPACE..RIGHT-TO-LEFT MARK
		{Lo: 0x202A, Hi: 0x202E, Stride: 1}, // Cf LEFT-TO-RIGHT EMBEDDING..RIGHT-TO-LEFT OVERRIDE
		{Lo: 0x2060, Hi: 0x2064, Stride: 1}, // Cf WORD JOINER..INVISIBLE PLUS
		{Lo: 0x2065, Hi: 0x2065, Stride: 1}, // Cn <reserved-2065>
		{Lo: 0x2066, Hi: 0x206F, Stride: 1}, // Cf LEFT-TO-RIGHT ISOLATE..NOMINAL DIGIT SHAPES
		{Lo: 0x3164, Hi: 0x3164, Stride: 1}, // Lo HANGUL FILLER
		{Lo: 0xFE00, Hi: 0xFE0F, Stride: 1}, // Mn VARIATION SELECTOR-1..16
		{Lo: 0xFEFF, Hi: 0xFEFF, Stride: 1}, // Cf ZERO WIDTH NO-BREAK SPACE
		{Lo: 0xFFA0, Hi: 0xFFA0, Stride: 1}, // Lo HALFWIDTH HANGUL FILLER
		{Lo: 0xFFF0, Hi: 0xFFF8, Stride: 1}, // Cn <reserved-FFF0>..<reserved-FFF8>
	},
	R32: []unicode.Range32{
		{Lo: 0x1BCA0, Hi: 0x1BCA3, Stride: 1}, // Cf SHORTHAND FORMAT LETTER OVERLAP..UP STEP
		{Lo: 0x1D173, Hi: 0x1D17A, Stride: 1}, // Cf MUSICAL SYMBOL BEGIN BEAM..END PHRASE
		{Lo: 0xE0000, Hi: 0xE0000, Stride: 1}, // Cn <reserved-E0000>
		{Lo: 0xE0001, Hi: 0xE0001, Stride: 1}, // Cf LANGUAGE TAG
		{Lo: 0xE0002, Hi: 0xE001F, Stride: 1}, // Cn <reserved-E0002>..<reserved-E001F>
		{Lo: 0xE0020, Hi: 0xE007F, Stride: 1}, // Cf TAG SPACE..CANCEL TAG
		{Lo: 0xE0080, Hi: 0xE00FF, Stride: 1}, // Cn <reserved-E0080>..<reserved-E00FF>
		{Lo: 0xE0100, Hi: 0xE01EF, Stride: 1}, // Mn VARIATION SELECTOR-17..256
		{Lo: 0xE01F0, Hi: 0xE0FFF, Stride: 1}, // Cn <reserved-E01F0>..<reserved-E0FFF>
	},
}

// ignored reports whether fold drops r: white space, a format character,
// DEL, or any other default-ignorable code point.
func ignored(r rune) bool {
	return unicode.IsSpace(r) || r == 0x7f || unicode.Is(unicode.Cf, r) || unicode.Is(defaultIgnorable, r)
}
