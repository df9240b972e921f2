import re, sys

def wd(a, b, w):
    # working days of week mask w among day numbers a..b (a, b >= 0), by arithmetic
    return ("((({w}) & 1) * (({b} + 7) / 7 - ({a} + 6) / 7) + ((({w}) >> 1) & 1) * (({b} + 6) / 7 - ({a} + 5) / 7)\n"
            "        + ((({w}) >> 2) & 1) * (({b} + 5) / 7 - ({a} + 4) / 7) + ((({w}) >> 3) & 1) * (({b} + 4) / 7 - ({a} + 3) / 7)\n"
            "        + ((({w}) >> 4) & 1) * (({b} + 3) / 7 - ({a} + 2) / 7) + ((({w}) >> 5) & 1) * (({b} + 2) / 7 - ({a} + 1) / 7)\n"
            "        + ((({w}) >> 6) & 1) * (({b} + 1) / 7 - ({a}) / 7))").format(a=a, b=b, w=w)

def off(cal, a, b, w):
    return ("(SELECT count(*) FROM model_days_off o WHERE o.calendar = {c} AND o.dn >= {a} AND o.dn <= {b}"
            " AND (({w} >> o.dow) & 1) = 1)").format(c=cal, a=a, b=b, w=w)

def isoff(cal, d):
    return "EXISTS (SELECT 1 FROM model_days_off o WHERE o.calendar = {c} AND o.dn = {d})".format(c=cal, d=d)

def expand(text):
    def rep(m):
        name, args = m.group(1), [x.strip() for x in split_args(m.group(2))]
        return {"WD": wd, "OFF": off, "ISOFF": isoff}[name](*args)
    prev = None
    while prev != text:
        prev = text
        text = re.sub(r"@(WD|OFF|ISOFF)\[([^\[\]]*)\]", rep, text)
    return text

def split_args(s):
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "|" and depth == 0:
            out.append(cur); cur = ""
        else:
            cur += ch
    out.append(cur)
    return out

src, dst = sys.argv[1], sys.argv[2]
open(dst, "w").write(expand(open(src).read()))
