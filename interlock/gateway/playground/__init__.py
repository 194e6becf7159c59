"""The playground's static assets (``index.html``, ``app.js``), served by ``interlock serve``."""
