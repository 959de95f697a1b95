"""Test worker: writes its argv and full environment as JSON to <dir>/<LOCAL_RANK>.json."""
import json
import os
import sys

out_dir = sys.argv[1]
with open(os.path.join(out_dir, os.environ["LOCAL_RANK"] + ".json"), "w") as f:
    json.dump({"argv": sys.argv[2:], "env": dict(os.environ)}, f)
