# zsh -f zsh_complete.zsh DIR 'cpplaunch --eng': the matches zsh's completion system offers
# for the last word of the command line, with the completion functions in DIR first in fpath,
# one per line. An interactive zsh in a pty (zsh/zpty) gets the line and a TAB; compadd is
# wrapped to print what it adds. Markers are written split in two so that the pty's echo of
# these commands never looks like output.
zmodload zsh/zpty
zpty session zsh -f -i
zpty -w session "PROMPT=''; fpath=(${(q)1} \$fpath); autoload -U compinit; compinit -u -D"
zpty -w session 'bindkey "^I" complete-word'
zpty -w session 'compadd() {
  if (( ${@[(I)-[OAD]]} )); then builtin compadd "$@"; return; fi
  local -a found; builtin compadd -O found "$@"; print -rl -- "MAT""CH:"${^found}
  builtin compadd "$@"; }'
zpty -w session '__report_done() { print -r -- "DO""NE:"; exit }; comppostfuncs=(__report_done)'
zpty -w session "$2"$'\t'
while zpty -r session line; do
  line=${line//$'\r'/}
  [[ $line == *DONE:* ]] && break
  [[ $line == *MATCH:* ]] && print -r -- ${line#*MATCH:}
done
zpty -d session
