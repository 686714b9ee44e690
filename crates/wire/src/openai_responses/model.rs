//! Borrowed, typed reading of a Responses request body's `input` items.
//!
//! No tagged or untagged enums: one flat struct per item with the fields
//! that matter, everything else skipped, strings borrowed from the body.

use std::{borrow::Cow, fmt};

use serde::{
    Deserialize, Deserializer,
    de::{self, SeqAccess, Visitor},
};
use serde_json::value::RawValue;

use crate::splice::Raw;

/// The top level of a request body.
#[derive(Deserialize)]
pub(super) struct Body<'a> {
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    pub model: Option<Cow<'a, str>>,
    #[serde(default)]
    pub stream: Option<bool>,
    #[serde(borrow, default)]
    pub input: Option<Input<'a>>,
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    pub previous_response_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub instructions: Option<Raw<'a>>,
}

/// `input`: a string, or an array of items.
pub(super) enum Input<'a> {
    Text(Cow<'a, str>),
    Items {
        items: Vec<Item<'a>>,
        /// The first item's raw text (for the first-turn hash).
        first: Option<Raw<'a>>,
    },
}

/// One input item; only the fields that matter for tool calls.
#[derive(Deserialize, Default)]
pub(super) struct Item<'a> {
    #[serde(
        borrow,
        deserialize_with = "crate::splice::opt_cow",
        default,
        rename = "type"
    )]
    pub kind: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    pub role: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    pub call_id: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    pub name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub arguments: Option<Text<'a>>,
    #[serde(borrow, default)]
    pub input: Option<Text<'a>>,
    /// Raw: decoded only when the result is read (a string or content
    /// parts, see [`Text`]).
    #[serde(borrow, default)]
    pub output: Option<Raw<'a>>,
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    pub status: Option<Cow<'a, str>>,
    /// A built-in `shell`, `local_shell` or `computer` call's arguments.
    #[serde(borrow, default)]
    pub action: Option<Raw<'a>>,
    /// A built-in `apply_patch` call's arguments.
    #[serde(borrow, default)]
    pub operation: Option<Raw<'a>>,
}

/// The kind of a Responses call the client runs, and of the output item
/// that answers it ([`ResponseView::call_kinds`](crate::ResponseView::call_kinds)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CallKind {
    /// `function_call` / `function_call_output`: a tool the request defines.
    Function,
    /// `custom_tool_call` / `custom_tool_call_output`: a free-form tool.
    Custom,
    /// `shell_call` / `shell_call_output`: the built-in `shell` tool.
    Shell,
    /// `local_shell_call` / `local_shell_call_output`: the built-in
    /// `local_shell` tool.
    LocalShell,
    /// `apply_patch_call` / `apply_patch_call_output`: the built-in
    /// `apply_patch` tool.
    ApplyPatch,
    /// `computer_call` / `computer_call_output`: the built-in computer-use
    /// tool.
    Computer,
}

impl CallKind {
    /// The `type` of the output item that answers this kind of call
    /// (`function_call_output`, `shell_call_output`, …).
    pub fn output_type(self) -> &'static str {
        match self {
            CallKind::Function => "function_call_output",
            CallKind::Custom => "custom_tool_call_output",
            CallKind::Shell => "shell_call_output",
            CallKind::LocalShell => "local_shell_call_output",
            CallKind::ApplyPatch => "apply_patch_call_output",
            CallKind::Computer => "computer_call_output",
        }
    }

    /// The kind of a call item's `type`.
    pub(crate) fn of_call(kind: &str) -> Option<CallKind> {
        Some(match kind {
            "function_call" => CallKind::Function,
            "custom_tool_call" => CallKind::Custom,
            "shell_call" => CallKind::Shell,
            "local_shell_call" => CallKind::LocalShell,
            "apply_patch_call" => CallKind::ApplyPatch,
            "computer_call" => CallKind::Computer,
            _ => return None,
        })
    }

    /// The kind of an output item's `type`.
    pub(crate) fn of_output(kind: &str) -> Option<CallKind> {
        CallKind::of_call(kind.strip_suffix("_output")?)
    }

    /// The built-in tool's name, which its calls do not carry (`None` for
    /// function and custom tools, whose calls name them).
    pub(crate) fn builtin_name(self) -> Option<&'static str> {
        match self {
            CallKind::Function | CallKind::Custom => None,
            CallKind::Shell => Some("shell"),
            CallKind::LocalShell => Some("local_shell"),
            CallKind::ApplyPatch => Some("apply_patch"),
            CallKind::Computer => Some("computer"),
        }
    }

    /// The call in the API's own error texts ("No tool output found for
    /// function call …").
    pub(crate) fn noun(self) -> &'static str {
        match self {
            CallKind::Function => "function call",
            CallKind::Custom => "custom tool call",
            CallKind::Shell => "shell call",
            CallKind::LocalShell => "local shell call",
            CallKind::ApplyPatch => "apply patch call",
            CallKind::Computer => "computer call",
        }
    }
}

/// What an item is, for pairing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// A call the client runs: a function, custom or built-in tool's.
    Call(CallKind),
    /// The output that answers one.
    Output(CallKind),
    /// Produced by the model: an assistant message, reasoning, a hosted
    /// tool call (which the provider runs itself).
    Assistant,
    /// An `item_reference`: points at a stored item we cannot see.
    Reference,
    /// Anything else (user, system, developer messages…).
    Other,
}

impl<'a> Item<'a> {
    /// What this item is.
    pub fn role(&self) -> Role {
        let Some(k) = self.kind.as_deref() else {
            return match self.role.as_deref() {
                Some("assistant") => Role::Assistant,
                _ => Role::Other,
            };
        };
        if let Some(call) = CallKind::of_call(k) {
            return Role::Call(call);
        }
        if let Some(output) = CallKind::of_output(k) {
            return Role::Output(output);
        }
        match k {
            "item_reference" => Role::Reference,
            "reasoning" | "mcp_list_tools" | "mcp_approval_request" => Role::Assistant,
            _ if k.ends_with("_call") => Role::Assistant,
            _ if self.role.as_deref() == Some("assistant") => Role::Assistant,
            _ => Role::Other,
        }
    }

    /// A call's tool name: its `name`, or a built-in tool's own.
    pub fn tool_name(&self, kind: CallKind) -> Cow<'a, str> {
        match (kind.builtin_name(), &self.name) {
            (Some(builtin), None) => Cow::Borrowed(builtin),
            (_, Some(name)) => name.clone(),
            (None, None) => Cow::Borrowed(""),
        }
    }

    /// A call's arguments: a function's `arguments`, a custom tool's
    /// `input`, a built-in's `action` or `operation` as JSON text.
    pub fn call_arguments(&self) -> Cow<'a, str> {
        match (&self.arguments, &self.input, self.action.or(self.operation)) {
            (Some(a), _, _) => a.0.clone(),
            (None, Some(i), _) => i.0.clone(),
            (None, None, Some(raw)) => Cow::Borrowed(raw.0),
            (None, None, None) => Cow::Borrowed(""),
        }
    }
}

/// Text that may come as a string or an array of content parts (text
/// parts joined by newlines; other parts skipped).
#[derive(Debug, Default)]
pub(super) struct Text<'a>(pub Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Text<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an array of content parts")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v)))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Text(Cow::Borrowed("")))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                #[derive(Deserialize)]
                struct Part<'a> {
                    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
                    text: Option<Cow<'a, str>>,
                }
                let mut out: Option<Cow<'a, str>> = None;
                while let Some(part) = seq.next_element::<Part<'de>>()? {
                    let Some(t) = part.text else { continue };
                    out = Some(match out {
                        None => t,
                        Some(prev) => {
                            let mut s = prev.into_owned();
                            s.push('\n');
                            s.push_str(&t);
                            Cow::Owned(s)
                        }
                    });
                }
                Ok(Text(out.unwrap_or(Cow::Borrowed(""))))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Input<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Input<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an array of input items")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Input::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Input::Text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Input::Text(Cow::Owned(v)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(8));
                let first = seq.next_element::<&'de RawValue>()?;
                if let Some(raw) = first {
                    let item: Item<'de> =
                        serde_json::from_str(raw.get()).map_err(de::Error::custom)?;
                    items.push(item);
                    while let Some(item) = seq.next_element::<Item<'de>>()? {
                        items.push(item);
                    }
                }
                Ok(Input::Items {
                    items,
                    first: first.map(|raw| Raw(raw.get())),
                })
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}
