-- An erased person's emails, kept as keyed fingerprints so that onboarding refuses to create
-- them again (docs/personal-data.md, "What erasure keeps"). erasure_secret is one row: 32
-- random bytes the warehouse makes the first time an erasure needs them (sink, erasureSecret),
-- never logged, never in an export; no role but the warehouse's owner is granted it (the
-- read-only roles of deploy/ are granted the models' views alone). erased_identities are,
-- per erasure of a person, the HMAC-SHA256 under that secret of each email the person ever
-- had (trimmed, lower case), in hex: without the secret a fingerprint confirms no guess; with
-- it, only a guessed email can be checked, nothing can be read back. Lifting the erasure
-- lifts its fingerprints' refusal (erasures.lifted_at), and they go with it (sink.LiftErasure).
CREATE TABLE erasure_secret (
    id     integer PRIMARY KEY CHECK (id = 1),
    secret bytea NOT NULL CHECK (length(secret) = 32)
);

CREATE TABLE erased_identities (
    erasure_id bigint NOT NULL REFERENCES erasures (id),
    email_key  text NOT NULL CHECK (email_key <> ''),
    PRIMARY KEY (erasure_id, email_key)
);
CREATE INDEX erased_identities_key ON erased_identities (email_key);
