"""Provider emulators built on the codecs; they enforce the services' validation rules."""
