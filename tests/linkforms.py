"""The link forms a hostile feed's sentences carried into alerts and "Since your last digest"
(issue 37), shared by the tests that check none reaches a reader."""

# Four forms the red team's alerts kept verbatim, and one that a renderer's clean-up joins into
# a link (a zero-width space inside a word: "https://evil.exampleclick").
HOSTILE_LINKS = (
    "https://evil.example/pay",
    "evil-example.com/relief",
    "press@evil.example",
    "203.0.113.5/x",
    "https://evil.example\u200bclick",
)
# What must not be left of them in what a reader gets.
LEFT_OVER = ("evil.example", "evil-example", "press@", "203.0.113.5", "exampleclick")
