# Sourced by the check_*.sh scripts of make realworld: one table row per capture.
# row INPUT RECOGNISED FIGURES VERDICT; the input is shown relative to $REALWORLD.
row() {
    local input=${1#"$REALWORLD"/}
    printf '%-58s %-12s %-60s %s\n' "$input" "$2" "$3" "$4"
}
