"""Test worker: writes its argv and full environment as JSON to <dir>/<LOCAL_RANK>.json.
$ENV_DUMP_DIR, when set, replaces <dir>: agents of one job run the same worker command (their
agents compare it), and each agent's environment says where its workers write."""
import json
import os
import sys

out_dir = os.environ.get("ENV_DUMP_DIR") or sys.argv[1]
with open(os.path.join(out_dir, os.environ["LOCAL_RANK"] + ".json"), "w") as f:
    json.dump({"argv": sys.argv[2:], "env": dict(os.environ)}, f)
