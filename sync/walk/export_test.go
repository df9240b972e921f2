package walk

// HeldOnly is heldOnly, for the tests.
var HeldOnly = heldOnly
